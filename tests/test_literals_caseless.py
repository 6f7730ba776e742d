"""The literal gate must not turn a scoped caseless group, (?i:...), into case-sensitive literals:
`(?i:could not) (?i:open)` has to match "Could not open" (found while adding Warp's libcuda line)."""
from signatures.literals import required_literals
from signatures.matcher import Matcher


def test_scoped_caseless_group_yields_no_cased_literal():
    req = required_literals("(?i:could ?n[o']t|cannot) (?i:open) the library")
    assert req is not None
    lits, _ = req
    assert all("could" not in t.lower() and "open" not in t.lower() for t in lits), lits


def test_a_pattern_with_a_scoped_caseless_group_matches_any_case(tmp_path):
    from signatures.loader import load_file

    f = tmp_path / "t.toml"
    f.write_text('''family = "missing-library"
[[signature]]
id = "missing-library.test-caseless"
origin = "environment"
frameworks = ["generic"]
role = "root"
priority = 80
title = "t"
patterns = ["ERROR: .{0,20}(?i:could ?n[o']t|cannot) (?i:open) (?P<library>lib[a-z]+[.]so)"]
explanation = "t"
fix = ["t"]
next_step = "t"
no_match = ["ERROR: could not close libfoo.so"]
[[signature.match]]
line = "ERROR: could not open libfoo.so"
facts = { library = "libfoo.so" }
''')
    m = Matcher(load_file(f))
    for line in ("ERROR: Could not open libfoo.so", "ERROR: COULD NOT OPEN libfoo.so", "ERROR: could not open libfoo.so"):
        assert m.scan_bytes(line.encode() + b"\n").matches, line
