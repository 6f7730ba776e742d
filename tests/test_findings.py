"""The one Finding shape: validation, JSON round trip, ordering and the renderers."""
import json

import pytest

from findings import Evidence, Finding, sort_findings
from findings import render


def _f(**kw):
    base = dict(id="lint.triton.unmasked-load", severity="error", reader="lint", title="load without a mask",
                origin="kernel-logic", evidence=[Evidence("k.py", 10, 5, "x = tl.load(p + offs)")],
                why="the last block reads past the end", fix="pass mask=offs < n", facts={"n": 1000})
    base.update(kw)
    return Finding(**base)


def test_round_trip():
    f = _f(confidence=0.8)
    assert Finding.from_json(json.loads(json.dumps(f.to_json()))) == f
    assert f.where == "k.py:10:5"


def test_rejects_unknown_severity_and_origin():
    with pytest.raises(ValueError, match="severity"):
        _f(severity="fatal")
    with pytest.raises(ValueError, match="origin"):
        _f(origin="gremlins")


def test_order_is_worst_first_then_place():
    a = _f(severity="info", id="a")
    b = _f(severity="error", id="b", evidence=[Evidence("k.py", 20)])
    c = _f(severity="error", id="c", evidence=[Evidence("k.py", 3)])
    assert [f.id for f in sort_findings([a, b, c])] == ["c", "b", "a"]


def test_markdown_escapes_pipes_backticks_html():
    md = render.markdown([_f(title="a | b `c` <script>")])
    assert "<script>" not in md and "\\|" in md and "\\`" in md


def test_sarif_shape():
    doc = render.sarif([_f(), _f(severity="info", id="x", evidence=[])])
    run = doc["runs"][0]
    assert doc["version"] == "2.1.0"
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {"lint.triton.unmasked-load", "x"}
    first = run["results"][0]
    assert first["level"] == "error"
    assert first["locations"][0]["physicalLocation"]["region"] == {"startLine": 10, "startColumn": 5}
    assert "locations" not in run["results"][1] and run["results"][1]["level"] == "note"


def test_text_block_fits_80_columns():
    out = render.text([_f(title="word " * 60, why="why " * 40)])
    assert max(len(line) for line in out.splitlines()) <= 80
