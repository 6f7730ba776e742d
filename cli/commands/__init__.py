"""One module per subcommand: `add_parser(subparsers)` and `run(args) -> exit status`.

Modules here import only argparse at the top so `diagnose --help` stays fast; the work is imported in `run`.
"""
