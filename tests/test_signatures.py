"""Every signature's embedded examples, and the loader's refusals, as pytest cases."""
import pytest

from diagnose.sigcheck import check_signature
from signatures.loader import SignatureError, load_all, load_file
from signatures.matcher import Matcher
from signatures.taxonomy import FAMILIES, ORIGINS

SIGS = load_all()
MATCHER = Matcher(SIGS)


@pytest.mark.parametrize("sig", SIGS, ids=[s.id for s in SIGS])
def test_signature_examples(sig):
    problems = check_signature(sig, MATCHER)
    assert not problems, "\n".join(map(str, problems))


def test_every_family_spelled_as_taxonomy():
    for s in SIGS:
        assert s.family in FAMILIES
        assert s.origin in ORIGINS or s.role == "benign"


def _write(tmp_path, body, name="x.toml"):
    p = tmp_path / name
    p.write_text(body)
    return p


GOOD = '''
family = "oom"
[[signature]]
id = "t.one"
origin = "resource-limit"
frameworks = ["torch"]
role = "root"
priority = 50
title = "t"
patterns = ['Tried to allocate (?P<requested_bytes>[\\d.]+ [KMG]iB)']
explanation = "e"
fix = ["needs {requested_bytes}"]
next_step = "n"
[[signature.match]]
line = "Tried to allocate 2.00 GiB"
facts = { requested_bytes = 2147483648 }
no_match = ["Tried to free 2.00 GiB"]
'''


def test_good_file_loads(tmp_path):
    [sig] = load_file(_write(tmp_path, GOOD))
    assert sig.id == "t.one" and sig.family == "oom"


@pytest.mark.parametrize("change, message", [
    (("patterns = ['Tried", "patterns = ['(unclosed Tried"), "bad regex"),
    (('family = "oom"', 'family = "oomm"'), "unknown family 'oomm'"),
    (('next_step = "n"\n', ''), "missing field(s) next_step"),
    (("patterns = ['Tried", "patterns = ['(x)\\1 Tried"), "backreferences"),
    (("patterns = ['Tried", "patterns = ['(?<=x)Tried"), "lookaround"),
    (('origin = "resource-limit"', 'origin = "cosmic-rays"'), "unknown origin"),
    (('fix = ["needs {requested_bytes}"]', 'fix = ["needs {nothing}"]'), "no pattern captures it"),
    (("patterns = ['Tried", "patterns = ['Could not allocate', 'Tried"), "has no [[signature.match]] example"),
    (('no_match = ["Tried to free 2.00 GiB"]', ''), "needs at least one no_match"),
])
def test_bad_signature_files_name_file_signature_and_problem(tmp_path, change, message):
    p = _write(tmp_path, GOOD.replace(*change))
    with pytest.raises(SignatureError) as e:
        load_file(p)
    assert str(p) in str(e.value) and message in str(e.value)
    if "missing" not in message:
        assert "'t.one'" in str(e.value)


def test_unknown_is_the_family_of_a_known_failure_that_is_no_gpu_failure_only(tmp_path):
    """`family = "unknown"` is for not-gpu.* root signatures (host RAM: signatures/data/not-gpu.toml)."""
    [sig] = load_file(_write(tmp_path, GOOD.replace('family = "oom"', 'family = "unknown"').replace('"t.one"', '"not-gpu.one"')))
    assert sig.family == "unknown" and sig.id == "not-gpu.one"
    for body in [GOOD.replace('family = "oom"', 'family = "unknown"'),                  # not a not-gpu.* id
                 GOOD.replace('"t.one"', '"not-gpu.one"'),                               # a not-gpu.* id in a GPU family
                 GOOD.replace('family = "oom"', 'family = "unknown"').replace('"t.one"', '"not-gpu.one"')
                     .replace('role = "root"', 'role = "symptom"')]:
        with pytest.raises(SignatureError):
            load_file(_write(tmp_path, body))


def test_duplicate_id_across_files_is_refused(tmp_path):
    d = tmp_path / "extra"
    d.mkdir()
    _write(d, GOOD, "a.toml")
    _write(d, GOOD, "b.toml")
    with pytest.raises(SignatureError, match="duplicate id"):
        load_all([d])


def test_not_toml_names_the_file(tmp_path):
    p = _write(tmp_path, "[[signature]\nid=")
    with pytest.raises(SignatureError, match="not valid TOML"):
        load_file(p)


def test_reference_page_is_current():
    """docs/signatures.md is generated (`make signatures-doc`); a signature change must regenerate it."""
    from pathlib import Path

    from cli.commands.signatures import render_reference

    page = Path(__file__).resolve().parent.parent / "docs" / "signatures.md"
    assert page.read_text() == render_reference(SIGS) + "\n", "run `make signatures-doc` and commit docs/signatures.md"


def test_an_example_must_assert_the_facts_it_captures(tmp_path):
    from diagnose.sigcheck import check_signature

    [sig] = load_file(_write(tmp_path, GOOD.replace("facts = { requested_bytes = 2147483648 }\n", "")))
    problems = check_signature(sig, Matcher([sig]))
    assert any("does not assert (requested_bytes)" in str(p) for p in problems), problems
