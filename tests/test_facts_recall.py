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
KNOWN = {"g22-012": "the tool's root is nvcc's summary line 8, not the diagnostic on line 4",
         # round g24, as its before-record found them (misses of the facts mechanisms, not fixed here)
         "g24-001": "Neuron compiler error code [GCA035] at the line start is not read as a code",
         "g24-003": "Neuron compiler error code [NLA001] at the line start is not read as a code",
         "g24-016": "the Xid number after 'Xid (PCI:...):' is not read as a code",
         "g24-025": "family missed (root taken at the AssertionError): the libaio name in the warning is not read",
         "g24-030": "the CUDA kernel name before 'block:' in a device assert (indexSelectLargeIndex) is not read",
         "g24-031": "Julia 'on thread (x, y, z) in block (x, y, z)' is not read as thread/block",
         # round g25, as its before-record found them (not fixed here)
         "g25-001": "the 'GPU 7' in the root line is not read as a device",
         "g25-004": "a function named in prose (`cuda_gridsize`) is not read as a kernel/function name",
         "g25-006": "the Python function in the root line (accelerator_barrier) is not read",
         "g25-007": "XLA's 'over 1.7K' amount (a count with a K suffix) is not read as a size",
         "g25-018": "a bare 'limit 16' with no unit is not read",
         "g25-026": "'Mismatched elements: 2/64' without spaces is failure evidence now, its counts are not read as facts",
         "g25-029": "NCCL's 'net_ib.cu:788 ... error 12' on the root line is not read; the tool's root is the later init.cu:194 line",
         "g25-036": "a PCI address (0000:9d:00.0) is not read as the device",
         "g25-037": "the DRM ring name (gfx_0.0.0) is not read",
         "g25-042": "the library named in prose (triton) is not read",
         "g25-043": "device and arch written in prose (RTX 5090, sm_120) are not read",
         # round g27, as its before-record found them (not fixed here)
         "g27-002": "XLA's 'Exceeded hbm capacity by 17.34G' excess is not read as a size (used and total are)",
         "g27-005": "an MLIR element type inside a vector type (vector<256x256xi8>) is not read as the dtype",
         "g27-006": "family missed (none): CMake's HIP error line, its file:line and the missing cmake package path, is not read",
         "g27-013": "the HLO element type (bf16[2048,4096]) is not read as the dtype (the shape is)",
         "g27-014": "SparseCore allocation bounds counted in words (140704, 131071, 23440) are not read as sizes",
         "g27-017": "the kernel named in a CUDA-1.x style 'Cuda error: <kernel> in file' line is not read",
         "g27-025": "family missed (none): gtest's 'difference ... is 85, which exceeds 1e-5' is not read as an error amount",
         "g27-027": "NCCL's 'Cuda failure 999' CUDA error code is not read as a code",
         "g27-031": "the Tensor method in the notebook's flattened traceback (.view) is not read as the op",
         # round g26, as its before-record found them (not fixed here)
         "g26-003": "XLA's kernel name after 'Failed to launch CUDA kernel:' (fusion_1560) and 'block dimensions: 160x1x1' are not read",
         "g26-004": "the tool's root is the later 'unhandled system error' line 6; the NCCL WARN line's misc/ibvwrap.cu:269 is not read",
         "g26-013": "family missed (none): 'ImportError:libcudart.so.9.0' with no space after the colon is not read",
         "g26-033": "the tool's root is the later 'ring create req: -5' line 15; the ring in 'stuck on render ring' is not read",
         "g26-037": "the THCUNN kernel name before 'block:' in a device assert (cunn_ClassNLLCriterion_updateOutput_kernel) is not read",
         "g26-038": "family missed (none): a device assert wrapped over three lines ('fail' / 'ed.') is not read",
         "g26-041": "the '[ 701 ]' after cudaErrorLaunchOutOfResources is not read as the code"}


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
