"""The `diagnose` command line. Subcommands live in cli/commands/, imported lazily."""
from __future__ import annotations

import argparse
import importlib
import sys

from cli.errors import UsageError
from diagnose import __version__

# The first commands in this order; any other module in cli/commands/ (add_parser, run) follows by name.
FIRST = ("classify", "explain", "clusters", "signatures", "env", "run", "triage", "tui", "numerics")


def _commands() -> list[str]:
    import pkgutil

    import cli.commands

    found = sorted(m.name for m in pkgutil.iter_modules(cli.commands.__path__) if not m.name.startswith("_"))
    return [c for c in FIRST if c in found] + [c for c in found if c not in FIRST]


COMMANDS = tuple(_commands())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="diagnose",
        description="Failure-mode diagnosis for GPU and accelerator kernels: classify crash logs, "
                    "check a machine, triage failing tasks.",
    )
    parser.add_argument("--version", action="version", version=f"diagnose {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"cli.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"cli.commands.{name}":
                continue
            raise
        p = module.add_parser(sub)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except UsageError as e:        # messages name user paths: never raw control characters
        from findings.render import visible

        print(f"diagnose {args.command}: {visible(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:       # `diagnose ... | head`: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # signature files are user input: name the file, no traceback
        if type(e).__name__ == "SignatureError":
            from findings.render import visible

            print(f"diagnose {args.command}: {visible(str(e))}", file=sys.stderr)
            return 2
        raise


def entry() -> None:
    sys.exit(main())
