"""`diagnose clusters PATH...`: unexplained failures grouped into templates with counts and examples."""


def add_parser(sub):
    p = sub.add_parser("clusters", help="group unexplained error lines into templates (which signature to write next)",
                       description=__doc__)
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--format", "-f", choices=("table", "jsonl", "markdown"), default="table")
    p.add_argument("--min-count", type=int, default=1, help="hide templates seen fewer times")
    p.add_argument("--jobs", "-j", type=int, default=None)
    return p


def run(args) -> int:
    import json

    from diagnose import batch
    from diagnose.clusters import cluster
    from findings.render import md_code, md_escape, visible

    results = batch.classify(args.paths, jobs=args.jobs)
    groups = cluster(results, min_count=args.min_count)
    unknown = sum(1 for d in results if d.family == "unknown")
    if args.format == "jsonl":
        for c in groups:
            print(json.dumps({"template": c.template, "count": c.count, "files": c.files, "example": c.example}))
        return 0
    if args.format == "markdown":
        print(f"# Unexplained failures: {unknown} of {len(results)} logs, {len(groups)} templates\n")
        print("| count | template | examples |\n|---:|---|---|")
        for c in groups:
            print(f"| {c.count} | {md_code(c.template)} | {md_escape(', '.join(c.files))} |")
        return 0
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    t = Table(title=f"{unknown} of {len(results)} logs unexplained: {len(groups)} templates",
              title_justify="left", header_style="bold", expand=True)
    t.add_column("count", justify="right")
    t.add_column("template", ratio=3, overflow="fold")
    t.add_column("examples", ratio=2, overflow="fold")
    for c in groups:
        t.add_row(str(c.count), Text(visible(c.template)), Text("\n".join(c.files[:3])))
    Console().print(t)
    return 0
