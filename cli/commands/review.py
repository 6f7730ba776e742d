"""`diagnose review TASK...`: a task folder -> rubric-based written feedback (Markdown or JSON)."""
import argparse


def add_parser(sub):
    p = sub.add_parser(
        "review", help="review a kernel task folder against the rubric: verdicts, evidence, feedback to paste",
        description="Find a task's parts by content (spec, kernels, tests, benchmarks, logs, tensors, env snapshot, "
                    "profiles; or the roles named in its task.toml), run every reader over them (log diagnosis, "
                    "lint, timing, numerics, profile, env checks) and judge each rubric dimension: pass / concern / "
                    "fail / not assessable, with the evidence (file:line) and feedback sentences. Several tasks: "
                    "one review each and a summary table. See docs/review.md.")
    p.add_argument("tasks", nargs="+", metavar="TASK", help="task folder(s)")
    p.add_argument("--format", "-f", choices=("markdown", "json"), default="markdown")
    p.add_argument("--rubric", metavar="FILE", help="a rubric TOML of your own (default: the shipped rubric)")
    p.add_argument("--out", "-o", metavar="DIR", help="write one review per task to DIR/<task>.md|.json and "
                                                     "DIR/summary.md; print only the summary")
    p.add_argument("--target", metavar="SM", help="the GPU target for source checks (e.g. sm_80, sm_90)")
    return p


def run(args: argparse.Namespace) -> int:
    import os
    import sys

    from cli.errors import UsageError
    from diagnose.review import RubricError, TaskError, load_rubric, review_task
    from diagnose.review import render

    try:
        rubric = load_rubric(args.rubric)
    except RubricError as e:
        raise UsageError(str(e)) from None
    if args.out:
        try:
            os.makedirs(args.out, exist_ok=True)
        except OSError as e:
            raise UsageError(f"{args.out}: cannot create the output folder ({e.strerror})") from None
    reviews, errors = [], []
    for task in args.tasks:
        try:
            r = review_task(task, rubric, target=args.target)
        except TaskError as e:
            print(f"diagnose review: {e}", file=sys.stderr)
            errors.append(str(task))
            continue
        reviews.append(r)
        text = render.as_json(r) if args.format == "json" else render.markdown(r)
        if args.out:
            name = os.path.basename(os.path.normpath(task)) or "task"
            with open(os.path.join(args.out, f"{name}.{'json' if args.format == 'json' else 'md'}"), "w",
                      encoding="utf-8") as f:
                f.write(text + ("\n" if args.format == "json" else ""))
        elif len(args.tasks) == 1 or args.format == "json":
            print(text)
        else:
            print(text)
            print("---\n")
    if len(args.tasks) > 1 or args.out:
        table = render.summary(reviews, errors)
        if args.out:
            with open(os.path.join(args.out, "summary.md"), "w", encoding="utf-8") as f:
                f.write(table)
        if args.format != "json" or args.out:
            print(table, end="")
    if errors and not reviews:
        return 2
    return 1 if any(r.overall == "fail" for r in reviews) or errors else 0
