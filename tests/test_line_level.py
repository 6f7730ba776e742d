"""The shared level reader (signatures.normalise.line_level): a level tag is read wherever a log
or an issue put it, so the engine's none/unknown decision and the chain read the same level."""
import pytest

from diagnose.engine import _counts
from signatures.normalise import line_level


@pytest.mark.parametrize("line,level", [
    ("`WARNING: NCCL_P2P_LEVEL is deprecated`", "warning"),     # issue quoting (markdown code)
    ("> INFO 05-02 10:00:01 llm_engine.py:161] retrying", "info"),  # blockquote
    ("  * Warning the kernel was slow", "warning"),             # a list bullet
    ("'DEBUG cache miss", "info"),
    ("WARNING: plain", "warning"),
    ("> RuntimeError: CUDA error: an illegal memory access was encountered", None),
    ("```", None),
    ("INFOMATION is not a level", None),
])
def test_quoted_level_tags_are_read_by_the_shared_reader(line, level):
    assert line_level(line) == level


def test_a_quoted_warning_is_not_failure_evidence_but_a_quoted_info_report_is():
    assert not _counts("error", "`WARNING: failed to load plugin, retrying")
    assert _counts("report", "> INFO step 100: loss is nan")
    assert _counts("error", "> ERROR: failed to load plugin")
