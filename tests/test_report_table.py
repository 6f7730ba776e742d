"""The classify table at 80 columns: a miss never looks like a true negative, paths keep their end."""
import io

from rich.console import Console

from diagnose.model import Diagnosis, Line
from diagnose.report import family_label, shorten_left, write_markdown, write_table


def test_unsure_diagnoses_are_marked():
    assert family_label(Diagnosis(path="a", family="unknown", confidence=0.5))[0] == "unknown?"
    assert family_label(Diagnosis(path="a", family="oom", signature="fallback.oom", confidence=0.3))[0] == "~oom?"
    assert family_label(Diagnosis(path="a", family="oom", signature="oom.x", confidence=0.4))[0] == "oom?"
    assert family_label(Diagnosis(path="a", family="oom", signature="oom.x", confidence=0.9))[0] == "oom"
    assert family_label(Diagnosis(path="a", family="none", confidence=0.1))[0] == "none?"   # no failure found, no progress either
    assert family_label(Diagnosis(path="a", family="none", confidence=0.75))[0] == "none"


def test_paths_are_shortened_from_the_left():
    assert shorten_left("runs/2024-06/task-0042/output.log", 20) == "…ask-0042/output.log"
    assert shorten_left("short.log", 20) == "short.log"


def test_table_fits_80_columns_and_gives_the_root_line_the_width():
    rows = [Diagnosis(path=f"/data/runs/very/long/prefix/task-{i:04d}/output.log", family="illegal-memory-access",
                      signature="illegal-memory-access.illegal-address", confidence=0.9,
                      root=Line(12, "RuntimeError: CUDA error: an illegal memory access was encountered " * 3))
            for i in range(3)] + [Diagnosis(path="/data/runs/x/task-9999/output.log", family="unknown", confidence=0.5,
                                            root=Line(3, "Segmentation fault (core dumped)"))]
    buf = io.StringIO()
    write_table(rows, Console(file=buf, width=80, color_system=None))
    out = buf.getvalue().splitlines()
    assert all(len(line) <= 80 for line in out)
    assert any("task-0001" in line for line in out)                     # what tells tasks apart stays
    root_lines = [line for line in out if "12: RuntimeError" in line]
    assert root_lines and all(len(line) >= 70 for line in root_lines)   # the root line gets the room
    assert any("unknown?" in line for line in out) and any("marked ?" in line for line in out)


def test_markdown_escapes_pipes_backticks_and_html():
    d = Diagnosis(path="a|b.log", family="oom", signature="oom.x", confidence=0.9,
                  root=Line(1, "x `rm -rf` <script>|"), fix="use `a|b`")
    buf = io.StringIO()
    write_markdown([d], buf)
    row = buf.getvalue().splitlines()[-1]
    assert "\\|" in row and "\\`" in row and "\\<script\\>" in row and "<script>" not in row


def test_the_tui_marks_an_unsure_none_like_the_table():
    """The task table shows a `none` no surer than the table's mark as `none?`."""
    from diagnose.store import TaskRow
    from tui.task_list import cell

    def row(family, confidence):
        return TaskRow(id=1, path="a.log", family=family, origin="", signature="", confidence=confidence,
                       root_line=None, root_text="", error="", verdict="", verdict_family="", verdict_origin="",
                       note="", reviewer="", at="", stale=False)

    assert cell(row("none", 0.51), "family") == "none?"
    assert cell(row("none", 0.75), "family") == "none"
    assert cell(row("oom", 0.3), "family") == "oom"
