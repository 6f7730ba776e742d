"""The generic evidence table (signatures/evidence.toml): every entry's examples, as the matcher sees them."""
import pytest

from signatures.evidence import KINDS, load
from signatures.loader import check_pattern
from signatures.matcher import Matcher

EVIDENCE = load()
MATCHER = Matcher([])


@pytest.mark.parametrize("ev", EVIDENCE, ids=[f"{e.kind}:{e.pattern[:40]}" for e in EVIDENCE])
def test_evidence_examples(ev):
    assert check_pattern(ev.pattern) is None, check_pattern(ev.pattern)
    for line in ev.match:
        kinds = {h[0] for h in MATCHER.scan_bytes(line.encode() + b"\n").hints}
        assert ev.kind in kinds, f"{line!r} gives {kinds or 'nothing'}, want {ev.kind}"
    for line in ev.no_match:
        import re2
        assert not re2.search(ev.pattern, line), f"{ev.pattern!r} must not match {line!r}"


def test_every_kind_has_evidence():
    assert {e.kind for e in EVIDENCE} == set(KINDS)


def test_a_bad_entry_names_the_file(tmp_path):
    from signatures.evidence import load as load_table

    p = tmp_path / "ev.toml"
    p.write_text('[[evidence]]\nkind = "oops"\npattern = "x"\ndocs = "d"\nmatch = ["x"]\nno_match = ["y"]\n')
    with pytest.raises(ValueError, match=str(p)):
        load_table(p)
