"""Imports point one way (docs/architecture.md): a test that fails when a module imports upward."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# package -> the project packages it may import (itself always allowed)
ALLOWED = {
    "findings": set(),
    "signatures": {"findings"},
    "probes": {"findings"},
    "diagnose": {"findings", "signatures", "probes"},
    "tui": {"findings", "signatures", "probes", "diagnose"},
    "cli": {"findings", "signatures", "probes", "diagnose", "tui"},
}


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0]


def test_no_upward_imports():
    bad = []
    for pkg, allowed in ALLOWED.items():
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for line, top in _imports(path):
                if top in ALLOWED and top != pkg and top not in allowed:
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {top} (a {pkg} module may import "
                               f"{sorted(allowed) or 'nothing of the project'})")
    assert not bad, "\n".join(bad)


def test_every_package_is_placed():
    # a new top-level package must be given its floor here (and in docs/architecture.md)
    tops = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "bench", "corpus"}
    assert tops <= set(ALLOWED), f"packages without a floor: {sorted(tops - set(ALLOWED))}"
