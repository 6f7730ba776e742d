"""NVIDIA Xid records read by NVIDIA's own Xid catalog (signatures/codes.toml, table `xid`).

Unit inputs written here in the driver's own format; each class of the catalog is one test: an
application's Xid is a kernel fault, a hardware Xid is the device, an informational Xid is not a
failure (and excuses only its own line), an ambiguous Xid names no family.
"""
import tomllib

import pytest

from diagnose.engine import diagnose_text
from signatures import codes

XID = next(t for t in tomllib.loads(codes.TABLE.read_text())["table"] if t["id"] == "xid")


def nvrm(n: int, rest: str = "pid=4242, name=python3, Ch 00000008") -> str:
    return f"[Mon Jun  3 10:00:00 2024] NVRM: Xid (PCI:0000:3b:00): {n}, {rest}\n"


def test_every_xid_entry_says_its_class_action_and_source():
    for c in XID["code"]:
        assert c.get("severity") in codes.SEVERITIES, c
        assert c.get("action") and c.get("mnemonic"), c
        assert str(c.get("source", "")).startswith("https://docs.nvidia.com/") or "k8s-device-plugin" in c["source"], c
        if c.get("benign"):
            assert c["severity"] in ("warning", "info"), c


@pytest.mark.parametrize("n", [13, 31])
def test_an_application_xid_is_a_kernel_fault_not_the_hardware(n):
    d = diagnose_text(nvrm(n, "pid=4242, name=python, Ch 00000008, intr 00000000. MMU Fault"))
    assert (d.family, d.origin) == ("illegal-memory-access", "kernel-logic"), d.signature
    assert d.facts["xid"] == n and d.facts["pid"] == 4242


def test_xid_43_follows_the_application_fault_and_does_not_outrank_it():
    d = diagnose_text(nvrm(31) + nvrm(43, "pid=4242, Ch 00000010"))
    assert d.family == "illegal-memory-access" and d.root.line == 1
    assert [c.role for c in d.chain if c.line == 2] == ["symptom"]


@pytest.mark.parametrize("n", [48, 64, 74, 79, 94, 95, 119, 120, 145])
def test_a_hardware_xid_is_a_hardware_fault(n):
    d = diagnose_text(nvrm(n))
    assert (d.family, d.origin) == ("hardware-fault", "hardware"), (n, d.signature)
    assert d.confidence >= 0.9


@pytest.mark.parametrize("n", [63, 92, 93])
def test_an_informational_xid_alone_is_not_a_failure(n):
    d = diagnose_text(nvrm(n, "pid='N/A', Row Remapper: New row marked for remapping"))
    assert d.family == "none", d.title
    assert "informational" in d.title and "Xid" in d.fix


def test_an_informational_xid_excuses_only_its_own_line():
    """Xid 48 (a double-bit error) then Xid 63 (its page retired): the 48 decides. An Xid 63 before
    a CUDA error does not hide the error either."""
    d = diagnose_text(nvrm(48, "pid=2156, An uncorrectable double bit error (DBE) has been detected on GPU")
                      + nvrm(63, "pid=2156, Row Remapper: New row marked for remapping"))
    assert d.family == "hardware-fault" and d.root.line == 1
    d = diagnose_text(nvrm(63, "pid='N/A', Row Remapper: New row marked for remapping")
                      + "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert d.family == "illegal-memory-access" and d.root.line == 2


@pytest.mark.parametrize("n", [45, 109])
def test_an_ambiguous_xid_is_a_failure_with_no_family(n):
    """45 (channels cleaned up after another error) and 109 (context-switch timeout) are left out of
    the table: still failure evidence (never `none`), but no family from the number alone."""
    d = diagnose_text(nvrm(n))
    assert d.family != "none"
    assert ".code.xid" not in (d.signature or "")


def test_the_xid_another_xid_names_as_its_cause_decides():
    d = diagnose_text(nvrm(45, "pid=5151, name=python3, Ch 00000004 caused by previous Xid 31"))
    assert d.family == "illegal-memory-access" and d.facts["xid"] == 31
    d = diagnose_text(nvrm(45, "pid=5151, name=python3, Ch 00000004 caused by previous Xid 149"))
    assert d.family == "hardware-fault" and d.facts["xid"] == 149


def test_a_health_check_repeating_the_number_uses_the_same_table():
    assert diagnose_text("gpu-health: node a12 GPU 3 reported Xid 63 (row remap pending)\n").family == "none"
    assert diagnose_text("gpu-health: node a12 GPU 3 reported Xid 95, draining\n").family == "hardware-fault"


def test_a_benign_code_must_be_informational(tmp_path):
    bad = tmp_path / "codes.toml"
    bad.write_text(codes.TABLE.read_text().replace('severity = "info"\nbenign = true', 'severity = "fatal"\nbenign = true', 1))
    with pytest.raises(codes.CodeTableError, match="benign"):
        codes.raw_signatures(bad)
