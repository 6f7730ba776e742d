"""`diagnose lint PATH...`: kernel source read before anything runs (Triton, Pallas, NKI, CUDA C++).

Exit status: 1 when an error-severity finding exists, 0 when none, 2 on bad input (an unreadable
or unparseable file, named on stderr; the other files are still linted)."""

FORMATS = ("text", "table", "jsonl", "markdown", "sarif")


def add_parser(sub):
    p = sub.add_parser("lint", help="find kernel bugs in source: masks, bounds, barriers, tiles, limits",
                       description=__doc__)
    p.add_argument("paths", metavar="PATH", nargs="*", help="kernel files (.py .cu .cuh .cpp .h ...) or directories")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text: one block per finding (default); table: one line each; jsonl; markdown; sarif (2.1.0)")
    p.add_argument("--target", metavar="ARCH", help="GPU to check limits against (sm_75 ... sm_120; default sm_90)")
    p.add_argument("--select", metavar="PREFIX", action="append", default=[],
                   help="only rules whose id starts with PREFIX (lint.cuda, lint.triton.unmasked-load, ...)")
    p.add_argument("--rules", action="store_true", help="list the rules and exit")
    p.add_argument("--explain", metavar="ID", help="print one rule's documentation and exit")
    return p


def run(args) -> int:
    import json
    import sys
    import textwrap

    from cli.errors import UsageError
    from diagnose import __version__
    from diagnose.lint import engine
    from findings import render

    try:
        rules = engine.rules()
    except engine.RuleError as e:
        raise UsageError(str(e)) from None
    if args.explain:
        try:
            sys.stdout.write(engine.explain_rule(args.explain))
        except KeyError as e:
            raise UsageError(e.args[0]) from None
        return 0
    if args.rules:
        if args.format == "jsonl":
            for r in rules.values():
                sys.stdout.write(json.dumps(r.to_json(), ensure_ascii=False) + "\n")
            return 0
        if args.format == "markdown":       # the rule table of docs/lint.md
            cur = None
            for r in rules.values():
                if r.framework != cur:
                    cur = r.framework
                    print(f"\n### {cur}\n\n| id | severity | family | finds |\n|---|---|---|---|")
                print(f"| `{r.id}` | {r.severity} | {r.family or '-'} | {r.summary.replace('|', '/')} |")
            return 0
        for fw in ("triton", "cuda", "pallas", "nki"):
            group = [r for r in rules.values() if r.framework == fw]
            print(f"{fw} ({len(group)} rules)")
            for r in group:
                print(f"  {r.severity[0].upper()} {r.id}")
                print(textwrap.fill(r.summary, 80, initial_indent="      ", subsequent_indent="      "))
        print(f"\n{len(rules)} rules; `diagnose lint --explain ID` prints one (E error, W warning, I info)")
        return 0
    if not args.paths:
        raise UsageError("give kernel files or directories to lint (or --rules, --explain ID)")
    try:
        engine.resolve_target(args.target)
    except ValueError as e:
        raise UsageError(str(e)) from None
    unknown = [s for s in args.select if not any(r.startswith(s) for r in rules)]
    if unknown:
        raise UsageError(f"--select {unknown[0]}: no rule id starts with it (`diagnose lint --rules` lists them)")

    report = engine.lint_paths(args.paths, target=args.target, select=args.select or None)
    fs = report.findings
    if args.format == "jsonl":
        sys.stdout.write(render.jsonl(fs))
    elif args.format == "markdown":
        sys.stdout.write(render.markdown(fs))
    elif args.format == "sarif":
        meta = {r.id: {"short": r.summary, "full": r.what.strip(), "help": r.fix.strip(), "level": r.severity}
                for r in rules.values()}
        json.dump(render.sarif(fs, tool="diagnose-lint", version=__version__, rules=meta), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        out = render.table(fs) if args.format == "table" else render.text(fs)
        if out:
            print(out + ("\n" if args.format == "text" else ""))
        counts = {s: sum(f.severity == s for f in fs) for s in ("error", "warning", "info")}
        ran = len([r for r in rules if not args.select or any(r.startswith(s) for s in args.select)])
        target, _ = engine.resolve_target(args.target)
        if fs:
            tail = (f"{len(fs)} finding{'s' if len(fs) != 1 else ''} ({counts['error']} error, {counts['warning']} "
                    f"warning, {counts['info']} info) in {report.files} file{'s' if report.files != 1 else ''}; "
                    f"{ran} rules, target {target}")
        else:
            tail = (f"no findings: {ran} rules over {report.files} file{'s' if report.files != 1 else ''} "
                    f"(target {target}); lint reads the source only, it does not run the kernels")
        print(textwrap.fill(tail, 80))
    for e in report.errors:
        print(f"diagnose lint: {e}", file=sys.stderr)
    if report.errors:
        return 2
    return 1 if report.has_error else 0
