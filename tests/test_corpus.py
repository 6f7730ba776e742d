"""The corpus: its manifest is consistent, every log classifies to its label, and a fast subset regenerates.

The classification tests read committed logs (no generator runs). The regeneration tests really run
nvcc / triton / torch on a few scenarios and skip when the tool is absent.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:       # corpus/ is a folder of the repo, not an installed package
    sys.path.insert(0, str(ROOT))

from corpus import generate  # noqa: E402
from diagnose.engine import diagnose_file
from signatures.taxonomy import FAMILIES, ORIGINS

CORPUS = ROOT / "corpus"
ROWS = generate.read_manifest()
SCENARIOS = {s.id: s for s in generate.load_scenarios()}
LOG_IDS = sorted(p.stem for p in (CORPUS / "logs").glob("*.log"))


def _facts(row) -> dict:
    return json.loads(row["expected_facts"])


# -- manifest consistency -----------------------------------------------------------------------

def test_manifest_has_the_documented_columns_and_enough_rows():
    header = (CORPUS / "manifest.tsv").read_text().splitlines()[0].split("\t")
    assert tuple(header) == generate.COLUMNS
    assert len(ROWS) >= 80
    assert all(len(r) == len(generate.COLUMNS) and None not in r.values() for r in ROWS)


def test_ids_are_unique():
    ids = [r["id"] for r in ROWS]
    assert len(ids) == len(set(ids))
    declared = [s.id for s in generate.load_scenarios()]
    assert len(declared) == len(set(declared))


def test_every_log_has_a_manifest_row_and_every_row_a_log():
    assert sorted(r["id"] for r in ROWS) == LOG_IDS


def test_every_row_names_a_declared_scenario_whose_files_exist():
    for r in ROWS:
        assert r["id"] in SCENARIOS, f"{r['id']}: no scenario declares it"
        s = SCENARIOS[r["id"]]
        for path in r["scenario"].split():
            assert (ROOT / path).is_file(), f"{r['id']}: scenario file {path} is missing"
        assert r["command"] == s.command.replace("\t", " ").replace("\n", " ")
        assert r["family"] == s.family and r["origin"] == s.origin, f"{r['id']}: manifest label differs from scenarios.toml"


def test_every_cpu_scenario_has_a_log():
    missing = [i for i, s in SCENARIOS.items() if not s.gpu and i not in LOG_IDS]
    assert not missing, f"scenarios without a log (run python -m corpus.generate --only ...): {missing}"


def test_labels_are_valid_taxonomy_spellings():
    for r in ROWS:
        # `unknown` only for a known failure that is not a GPU one (host RAM: signatures/data/not-gpu.toml)
        assert r["family"] in FAMILIES, f"{r['id']}: family {r['family']!r}"
        if r["family"] == "none":
            assert r["origin"] == "-", f"{r['id']}: a negative has no origin"
        else:
            assert r["origin"] in ORIGINS, f"{r['id']}: origin {r['origin']!r}"
        assert isinstance(_facts(r), dict)
        assert r["machine"], f"{r['id']}: machine is empty"


def test_corpus_covers_enough_families_and_has_negatives():
    families = {r["family"] for r in ROWS}
    # 12 taxonomy families with `none`; launch-config, device-assert, autotune-failure need a GPU
    assert len(families) >= 12 and len(families - {"none"}) >= 11, sorted(families)
    assert sum(r["family"] == "none" for r in ROWS) >= 5


def test_expected_facts_appear_in_the_log_text():
    """A fact is only expected if the log really shows it (numbers as decimal or hex, arch as sm_XX)."""
    for r in ROWS:
        text = (CORPUS / "logs" / f"{r['id']}.log").read_text()
        for name, value in _facts(r).items():
            if isinstance(value, int):
                assert str(value) in text or hex(value) in text, f"{r['id']}: {name}={value} not in log"
            elif isinstance(value, list):
                assert all(str(v) in text for v in value), f"{r['id']}: {name}={value} not in log"
            elif name == "arch" or name.endswith(("_cc", "_arch")):
                digits = value.replace(".", "").rstrip("af")
                assert digits in text, f"{r['id']}: {name}={value} not in log"
            elif not (name.startswith("dtype") or name.startswith("device")):
                assert str(value) in text, f"{r['id']}: {name}={value} not in log"


def test_logs_are_normalised():
    """No absolute paths of this machine, no raw addresses: a rerun elsewhere gives the same text."""
    for log_id in LOG_IDS:
        text = (CORPUS / "logs" / f"{log_id}.log").read_text()
        for volatile in (str(ROOT), str(Path.home()) + "/"):
            assert volatile not in text, f"{log_id}: contains {volatile!r}"
        # Python's temp dirs (/tmp/tmpab12cd) must be normalised; nvcc's tmpxft_<id> already is
        assert not re.search(r"/tmp/tmp(?!xft_<id>)", text), f"{log_id}: contains a raw temp path"
        assert text.endswith("\n") and "\r" not in text


def test_normalise_replaces_volatile_parts():
    work = Path("/some/work/dir")
    raw = ("/some/work/dir/x.py:3: at 0x7f52e36a2b80 pid 4242 took 1.25 s\n"
           "ptxas /tmp/tmpxft_000022a3_00000000-6_k.ptx, line 3; error\n"
           "E1130 04:28:43.553000 12972 torch/x.py:1] boom\n")
    out = generate.normalise(raw, work)
    assert out == ("x.py:3: at 0x<addr> pid <pid> took <t>s\n"
                   "ptxas /tmp/tmpxft_<id>-6_k.ptx, line 3; error\n"
                   "E0000 00:00:00.000000 <tid> torch/x.py:1] boom\n")


# -- classification: every log to its label -----------------------------------------------------

@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_log_classifies_to_its_family_with_its_facts(row):
    d = diagnose_file(CORPUS / "logs" / f"{row['id']}.log")
    root = d.root.text if d.root else None
    assert d.family == row["family"], f"{row['id']}: got {d.family} ({d.signature}) from {root!r}"
    for name, value in _facts(row).items():
        assert d.facts.get(name) == value, f"{row['id']}: fact {name}: got {d.facts.get(name)!r}, want {value!r}"


# -- regeneration of a fast subset --------------------------------------------------------------

def _regenerate(scenario_id: str, tmp_path: Path):
    s = SCENARIOS[scenario_id]
    missing = generate.missing_tools(s)
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: cannot regenerate {scenario_id}")
    text, rc = generate.run_scenario(s, work_root=tmp_path)
    assert rc != 0 or s.family == "none", f"{scenario_id}: the scenario no longer fails"
    log = tmp_path / f"{scenario_id}.log"
    log.write_text(text)
    return text, diagnose_file(log)


FAST = [
    "cuda-syntax-error",
    "cuda-smem-static-256k",
    "cuda-unsupported-arch-sm70",
    "triton-arange-not-pow2",
    "torch-linear-shape-mismatch",
]


@pytest.mark.parametrize("scenario_id", FAST)
def test_regenerated_log_matches_the_committed_one_and_its_classification(scenario_id, tmp_path):
    text, d = _regenerate(scenario_id, tmp_path)
    committed = (CORPUS / "logs" / f"{scenario_id}.log").read_text()
    assert text == committed, f"{scenario_id}: the rerun differs from the committed log"
    assert d.family == diagnose_file(CORPUS / "logs" / f"{scenario_id}.log").family


def test_regenerate_needs_tools_it_declares():
    """The fast subset declares its tools, so a machine without them skips instead of failing."""
    assert "nvcc" in SCENARIOS["cuda-syntax-error"].needs
    assert "triton" in SCENARIOS["triton-arange-not-pow2"].needs
    assert "torch" in SCENARIOS["torch-linear-shape-mismatch"].needs
    if shutil.which("nvcc") is None:
        assert generate.missing_tools(SCENARIOS["cuda-syntax-error"]) == ["nvcc"]
    if find_spec("torch") is None:
        assert generate.missing_tools(SCENARIOS["torch-linear-shape-mismatch"]) == ["torch"]


def test_gpu_scenarios_are_declared_validly_and_parse():
    """GPU scenarios cannot run here: their labels are valid, their files exist and parse."""
    import py_compile
    import subprocess

    gpu = [s for s in SCENARIOS.values() if s.gpu]
    assert len(gpu) >= 10
    for s in gpu:
        assert s.family in FAMILIES and (s.origin in ORIGINS or s.family == "none"), s.id
        for f in s.files:
            path = s.folder / f
            assert path.is_file(), f"{s.id}: {f} missing"
            if path.suffix == ".py":
                py_compile.compile(str(path), doraise=True)
    for script in [*(CORPUS / "gpu").glob("*.sh"), *(CORPUS / "scenarios" / "gpu").glob("*.sh")]:
        assert subprocess.run(["bash", "-n", str(script)]).returncode == 0, script


def test_readme_counts_are_the_manifests():
    """corpus/README.md's count tables are typed: they must say what the manifest says."""
    import collections

    text = (CORPUS / "README.md").read_text()
    counts = text[text.index("## Counts"):].split("\n## ", 1)[0]
    tables: dict[str, dict[str, int]] = {}
    for block in counts.split("\n\n"):
        rows = [r for r in block.splitlines() if r.startswith("|") and not r.startswith("|---")]
        if rows:
            key = rows[0].strip("| ").split(" |")[0]
            tables[key] = {r.split("|")[1].strip().split(" ")[0]: int(r.split("|")[2]) for r in rows[1:]}
    manifest = ROWS
    assert f"({len(manifest)} logs" in counts
    for column in ("family", "origin", "framework"):
        assert tables[column] == dict(collections.Counter(r[column] for r in manifest)), column


# Origin is judged from the evidence (signature origins, diagnose/advice/rules.toml and origin.toml).
# A corpus log whose origin the tool gets wrong is named here with why its log cannot show it; none is
# today (the float32-tolerance and one-host gloo rules of origin.toml read the last two that were).
CORPUS_ORIGIN_MISSES: set[str] = set()


def test_corpus_origins_are_right_except_the_named_misses():
    wrong = {}
    for r in ROWS:
        d = diagnose_file(CORPUS / "logs" / f"{r['id']}.log")
        if (d.origin or "-") != r["origin"]:
            wrong[r["id"]] = f"want {r['origin']}, got {d.origin} ({d.signature})"
    assert set(wrong) == CORPUS_ORIGIN_MISSES, wrong
