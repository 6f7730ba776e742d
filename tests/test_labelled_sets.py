"""Labelled real logs: the shared dev set and the issue-thread fixture rounds, held to exact lists.

Each round's known misses are listed in tests/fixtures/issues/known-misses.tsv (round, id, what,
got): a change that fixes one fails until its line is removed, a change that breaks one fails until
it is understood. `what` is `family`, `origin` or `root` (every manifest annotates origin and the
root line: g21 on before the tool was run on them, g1-g20 afterwards, read from each row's note and
log), `cascade` (a cascade whose chain shows no symptom), or `trim` (a log whose family changes when
trimmed to the tool's root line: the trimmed family in `got`). Origin and root line are compared only
where the family is right. PyTorch's log-classifier rule holds too:
trimming a log to its failing part (the root line and what follows) must not change its verdict.
"""
import csv
import tempfile
from pathlib import Path

import pytest

from diagnose.engine import diagnose_file, diagnose_text

ROOT = Path(__file__).resolve().parent.parent
# the shared dev set sits beside the checkout (../shared), or beside the main checkout for a worktree
DEV = next((p / "shared" / "realworld" for p in ROOT.parents if (p / "shared" / "realworld").exists()),
           ROOT.parent / "shared" / "realworld")
ISSUES = Path(__file__).parent / "fixtures" / "issues"
KNOWN = ISSUES / "known-misses.tsv"
TRIM_BEFORE, TRIM_AFTER = 3, 40      # lines kept around the root when a log is trimmed


def _rows(manifest: Path):
    with open(manifest, newline="") as f:
        return [r for r in csv.DictReader(f, delimiter="\t") if r.get("id")]


def _known(round_name: str) -> dict[tuple[str, str], str]:
    with open(KNOWN, newline="") as f:
        return {(r["id"], r["what"]): r["got"] for r in csv.DictReader(f, delimiter="\t")
                if r["round"] == round_name}


def _misses(rows, log_of) -> dict[tuple[str, str], str]:
    out = {}
    for r in rows:
        d = diagnose_file(log_of(r["id"]))
        if d.family != r["family"]:
            out[(r["id"], "family")] = d.family
            continue
        if r.get("origin") not in (None, "", "-") and d.origin != r["origin"]:
            out[(r["id"], "origin")] = d.origin or "-"
        if (r.get("root_line") or "").isdigit() and (not d.root or d.root.line != int(r["root_line"])):
            out[(r["id"], "root")] = str(d.root.line) if d.root else "-"
    return out


def _compare(name, got, want):
    fixed = sorted(k for k in want if k not in got)
    broken = sorted(k for k in got if k not in want)
    changed = sorted(k for k in got if k in want and got[k] != want[k])
    msg = [f"{name}: the known-miss list is out of date (tests/fixtures/issues/known-misses.tsv)"]
    msg += [f"  now right: {i} {what} (listed as {want[(i, what)]})" for i, what in fixed]
    msg += [f"  new miss:  {i} {what}: got {got[(i, what)]}" for i, what in broken]
    msg += [f"  changed:   {i} {what}: got {got[(i, what)]}, listed {want[(i, what)]}" for i, what in changed]
    assert not (fixed or broken or changed), "\n".join(msg)


@pytest.mark.skipif(not (DEV / "manifest.tsv").exists(), reason="../shared/realworld not present")
def test_dev_set_exact_misses():
    rows = _rows(DEV / "manifest.tsv")
    got = {k: v for k, v in _misses(rows, lambda i: DEV / "logs" / f"{i}.log").items() if k[1] == "family"}
    _compare("dev", got, _known("dev"))
    cascades = [r for r in rows if r["root_cause_note"].startswith("CASCADE")]
    assert cascades
    for r in cascades:
        assert diagnose_file(DEV / "logs" / f"{r['id']}.log").family == r["family"], r["id"]


MANIFESTS = sorted(ISSUES.glob("manifest-*.tsv"), key=lambda p: int(p.stem.split("-g")[1]))


@pytest.mark.parametrize("manifest", MANIFESTS, ids=[m.stem for m in MANIFESTS])
def test_issue_thread_fixtures_exact_misses(manifest):
    rows = _rows(manifest)
    for r in rows:
        assert (ISSUES / f"{r['id']}.log").exists(), f"{manifest.name}: {r['id']}.log missing"
    round_name = manifest.stem.split("-", 1)[1]
    want = {k: v for k, v in _known(round_name).items() if k[1] not in ("cascade", "trim")}
    _compare(round_name, _misses(rows, lambda i: ISSUES / f"{i}.log"), want)


def _trim_changes(paths, known: dict | None = None) -> list[str]:
    """Logs whose family changes when trimmed to the root line, 3 lines before it and 40 after
    (those listed as `trim` in known-misses.tsv with the same trimmed family excepted)."""
    changed = []
    known = known or {}
    for path in paths:
        d = diagnose_file(path)
        if not d.root or d.family in ("none", "unknown"):
            continue
        lines = path.read_bytes().split(b"\n")
        start = max(0, d.root.line - 1 - TRIM_BEFORE)
        part = b"\n".join(lines[start:d.root.line + TRIM_AFTER])
        if len(part) == len(path.read_bytes()):
            continue
        t = diagnose_text(part, str(path))
        if t.family != d.family and known.get((path.stem, "trim")) != t.family:
            changed.append(f"{path.stem}: {d.family} -> {t.family} when trimmed to lines {start + 1}-{d.root.line + TRIM_AFTER}")
    return changed


@pytest.mark.parametrize("manifest", MANIFESTS, ids=[m.stem for m in MANIFESTS])
def test_trimming_to_the_failing_part_keeps_the_verdict(manifest):
    """The root line with a few lines before it and the lines after it give the same family."""
    known = _known(manifest.stem.split("-", 1)[1])
    rows = _rows(manifest)
    changed = _trim_changes((ISSUES / f"{r['id']}.log" for r in rows), known)
    assert not changed, "\n".join(changed)
    # a listed trim miss that no longer changes is out of date too
    stale = [i for i, what in known if what == "trim" and not _trim_changes([ISSUES / f"{i}.log"])]
    assert not stale, f"trim misses now right, remove them from known-misses.tsv: {stale}"


@pytest.mark.skipif(not (DEV / "manifest.tsv").exists(), reason="../shared/realworld not present")
def test_trimming_keeps_the_verdict_on_the_dev_set():
    changed = _trim_changes(DEV / "logs" / f"{r['id']}.log" for r in _rows(DEV / "manifest.tsv"))
    assert not changed, "\n".join(changed)


@pytest.mark.parametrize("manifest", MANIFESTS, ids=[m.stem for m in MANIFESTS])
def test_every_manifest_annotates_origin_and_root_line(manifest):
    """Every round carries origin (the taxonomy's spelling, `-` for a log with no GPU failure) and the
    root line (1-based, a line of the log; empty for `none`, and where it could not be verified), so
    the exact-miss lists hold origin and root line as they hold the family."""
    from signatures.taxonomy import ORIGINS

    rows = _rows(manifest)
    assert {"origin", "root_line"} <= set(rows[0]), manifest.name
    for r in rows:
        if r["family"] in ("none", "unknown"):
            assert r["origin"] == "-", r["id"]
        else:
            assert r["origin"] in ORIGINS, f"{r['id']}: origin {r['origin']!r}"
        assert r["root_line"] == "" or r["root_line"].isdigit(), r["id"]
        if r["family"] == "none":
            assert r["root_line"] == "", r["id"]
        if r["root_line"]:
            n = len((ISSUES / f"{r['id']}.log").read_bytes().split(b"\n"))
            assert 1 <= int(r["root_line"]) <= n, f"{r['id']}: root_line {r['root_line']} outside the log"
    failures = [r for r in rows if r["family"] != "none"]
    assert sum(bool(r["root_line"]) for r in failures) >= 0.95 * len(failures), manifest.name


# Rounds whose collection stopped short (the session's time ran out): scored and recorded like any round,
# but too small to hold the negatives and cascades a full round must (g36: 10 logs, unaudited).
PARTIAL_ROUNDS = {"g36"}


def test_rounds_from_g21_annotate_origin_root_and_facts():
    """Fresh rounds carry what was annotated before the tool ran: origin, root line, facts, cascade."""
    for manifest in MANIFESTS:
        if int(manifest.stem.split("-g")[1]) < 21:
            continue
        rows = _rows(manifest)
        assert {"origin", "root_line", "facts", "cascade"} <= set(rows[0]), manifest.name
        for r in rows:
            # no GPU failure (`none`: no failure at all; `unknown`: a failure that is not a GPU one) has no origin
            assert r["origin"] == "-" if r["family"] in ("none", "unknown") else r["origin"] != "-", r["id"]
            assert (r["root_line"] == "") == (r["family"] == "none"), r["id"]
            assert r["cascade"] in ("yes", "no"), r["id"]
        negatives = sum(r["family"] in ("none", "unknown") for r in rows)
        if manifest.stem.split("-", 1)[1] in PARTIAL_ROUNDS:
            assert len(rows) < 40, f"{manifest.name} is a full round now: take it off PARTIAL_ROUNDS"
        else:
            assert negatives >= 5 and sum(r["cascade"] == "yes" for r in rows) >= 5, manifest.name
        assert (ISSUES / f"before-{manifest.stem.split('-', 1)[1]}.tsv").exists(), "before-record missing"


@pytest.mark.parametrize("manifest", [m for m in MANIFESTS if int(m.stem.split("-g")[1]) >= 21],
                         ids=[m.stem for m in MANIFESTS if int(m.stem.split("-g")[1]) >= 21])
def test_cascades_list_their_symptoms(manifest):
    """In the fresh rounds' cascades, the lines the root explains are in the chain as symptoms
    (known gaps listed as `cascade` in known-misses.tsv, like the other misses)."""
    round_name = manifest.stem.split("-", 1)[1]
    got = {}
    for r in _rows(manifest):
        if r["cascade"] != "yes":
            continue
        d = diagnose_file(ISSUES / f"{r['id']}.log")
        if d.family == r["family"] and not any(c.role == "symptom" for c in d.chain):
            got[(r["id"], "cascade")] = "no symptom"
    _compare(round_name, got, {k: v for k, v in _known(round_name).items() if k[1] == "cascade"})


def test_trimming_test_trims(tmp_path):
    """The trimming rule is not vacuous: a root far into a log is still found in its trimmed part."""
    body = "step ok\n" * 200 + "RuntimeError: CUDA error: an illegal memory access was encountered\n" + "x\n" * 100
    d = diagnose_text(body)
    lines = body.encode().split(b"\n")
    part = b"\n".join(lines[d.root.line - 1 - TRIM_BEFORE:d.root.line + TRIM_AFTER])
    assert len(part) < len(body) / 2 and diagnose_text(part).family == d.family == "illegal-memory-access"
