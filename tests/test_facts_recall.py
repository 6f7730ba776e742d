"""A fact that stands in the root line is extracted: over every annotated row of the fresh rounds
(manifest-gNN.tsv with `facts` and `root_line`), each annotated fact whose value is written in the
root line must be among the diagnosis's facts (compared by value, as bench/rounds.py scores them)."""
import re

import pytest

from bench.rounds import ISSUES, annotated_facts, fact_found, rows

ROUNDS = sorted({p.stem.split("-", 1)[1] for p in ISSUES.glob("manifest-g*.tsv")},
                key=lambda r: int(r[1:]))
ANNOTATED = [(r, row) for r in ROUNDS for row in rows(r)
             if row.get("facts") and (row.get("root_line") or "").isdigit()]


def _norm(text: str) -> str:
    return re.sub(r"[\s'\"`()\[\]]", "", str(text).lower())


def _in_root_line(value: str, root_text: str) -> bool:
    return len(_norm(value)) >= 2 and _norm(value) in _norm(root_text)


# rows whose root the tool places elsewhere (the root-line misses of bench/rounds.py): their fact is
# not in the line the tool reads as the root
KNOWN = {"g22-012": "the tool's root is nvcc's summary line 8, not the diagnostic on line 4"}


def test_there_are_annotated_rows():
    assert len(ANNOTATED) >= 90


@pytest.mark.parametrize("row", [row for _, row in ANNOTATED], ids=[row["id"] for _, row in ANNOTATED])
def test_a_fact_in_the_root_line_is_extracted(row):
    from diagnose.engine import diagnose_file

    if row["id"] in KNOWN:
        pytest.xfail(KNOWN[row["id"]])
    path = ISSUES / f"{row['id']}.log"
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    n = int(row["root_line"])
    root_text = lines[n - 1] if 0 < n <= len(lines) else ""
    d = diagnose_file(path)
    missed = [f"{k}={v}" for k, v in annotated_facts(row)
              if _in_root_line(v, root_text) and not fact_found(v, d.facts)]
    assert not missed, f"{row['id']}: root line {n} says {missed}, facts are {d.facts}"
