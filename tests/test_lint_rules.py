"""Every lint rule: docs complete, a check registered, and its fixture file run semgrep-style.

A fixture is tests/fixtures/lint/rules/<rule id without "lint.">.<py|cu>. A `# ruleid: ID` (or
`// ruleid: ID`) comment says the next code line must be flagged by ID; `# ok: ID` says it must not.
Each fixture has at least one of each, and ID fires on no unmarked line.
"""
import re
from pathlib import Path

import pytest

from diagnose.lint import lint_file, rules
from diagnose.lint.registry import CHECKS

FIXTURES = Path(__file__).parent / "fixtures" / "lint" / "rules"
MARK = re.compile(r"(?:#|//)\s*(ruleid|ok):\s*([\w.\-]+)")


def fixture_of(rule_id):
    stem = rule_id.removeprefix("lint.")
    found = [p for p in FIXTURES.glob(stem + ".*")]
    assert len(found) == 1, f"{rule_id}: expected one fixture {stem}.py|.cu in {FIXTURES}, found {found}"
    return found[0]


def markers(path):
    """(kind, rule id) -> set of line numbers the markers point at."""
    lines = path.read_text().splitlines()
    out = {}
    for i, line in enumerate(lines):
        for kind, rid in MARK.findall(line):
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or MARK.search(lines[j]) and
                                      lines[j].strip().startswith(("#", "//"))):
                j += 1
            out.setdefault((kind, rid), set()).add(j + 1)
    return out


def test_at_least_25_rules_each_with_a_check():
    rs = rules()
    assert len(rs) >= 25
    assert set(rs) == set(CHECKS)
    frameworks = {r.framework for r in rs.values()}
    assert frameworks == {"triton", "cuda", "pallas", "nki"}


@pytest.mark.parametrize("rule_id", sorted(rules()))
def test_rule_docs(rule_id):
    r = rules()[rule_id]
    for field in ("summary", "what", "why", "example", "use_instead", "fix"):
        assert getattr(r, field).strip(), f"{rule_id}: empty {field}"
    assert r.example.strip() != r.use_instead.strip()


@pytest.mark.parametrize("rule_id", sorted(rules()))
def test_rule_fixture(rule_id):
    path = fixture_of(rule_id)
    m = markers(path)
    want = m.get(("ruleid", rule_id), set())
    ok = m.get(("ok", rule_id), set())
    assert want, f"{path.name}: no '# ruleid: {rule_id}' marker"
    assert ok, f"{path.name}: no '# ok: {rule_id}' marker"
    found = lint_file(path)
    got = {f.evidence[0].line for f in found if f.id == rule_id}
    assert got == want, f"{path.name}: {rule_id} fired on lines {sorted(got)}, markers say {sorted(want)}"
    assert not got & ok
    for f in found:
        assert f.evidence[0].text and f.why and f.fix and f.reader == "lint"
