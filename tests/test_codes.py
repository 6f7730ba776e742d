"""Status codes and error numbers as evidence on their own (signatures/codes.toml -> support signatures)."""
import tomllib

import pytest

from diagnose.engine import diagnose_text
from signatures import codes
from signatures.loader import SignatureError, load_all

TABLES = tomllib.loads(codes.TABLE.read_text())["table"]


def _every_code():
    for t in TABLES:
        for c in t["code"]:
            for p in t["patterns"]:
                for kind, one in (("numbers", "number"), ("names", "name"), ("messages", "message")):
                    if "{" + kind + "}" not in p["template"]:
                        continue
                    values = ([c["number"]] if "number" in c else []) if kind == "numbers" else c.get(kind, [])
                    for v in values:
                        line = p["probe"].replace("{" + one + "}", str(v))
                        # a code its vendor calls informational is not a failure: the log reads `none`
                        family = "none" if c.get("benign") else c["family"]
                        yield pytest.param(t["id"], family, line, id=f"{t['id']}:{v}:{p['probe'][:20]}")


@pytest.mark.parametrize("table,family,line", list(_every_code()))
def test_every_code_of_every_table_gives_its_family(table, family, line):
    """Each code, in each way its table says it is reported, alone in a log gives the code's family."""
    d = diagnose_text(line + "\n")
    assert d.family == family, (table, line, d.signature)


def test_every_table_names_its_public_source():
    for t in TABLES:
        sources = [t["source"]] if isinstance(t["source"], str) else t["source"]
        assert sources and all(s.startswith("https://") for s in sources), t["id"]


@pytest.mark.parametrize("text,family,fact", [
    # real shapes of the wordings, from tools that print only a code
    ("cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory", "oom", ("cuda_error", "cudaErrorMemoryAllocation")),
    ("numba.cuda.cudadrv.driver.CudaAPIError: [700] Call to cuMemcpyDtoH results in UNKNOWN_CUDA_ERROR", "illegal-memory-access", ("cuda_code", 700)),
    ("ERROR: LoadError: CUDA error: unknown (code #710, ERROR_UNKNOWN)", "device-assert", ("cuda_code", 710)),
    ("RuntimeError: hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", "arch-mismatch", ("cuda_error", "hipErrorNoBinaryForGpu")),
    ("E0101 00:00:00.000 123 gemm.cc:40] cublas returned CUBLAS_STATUS_ALLOC_FAILED", "oom", ("cublas_status", "CUBLAS_STATUS_ALLOC_FAILED")),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedExFix(handle, opa, opb, m, n, k, (void*)(&falpha), a, CUDA_R_16BF, lda, stridea, b, CUDA_R_16BF, ldb, strideb, (void*)(&fbeta), c, CUDA_R_16BF, ldc, stridec, num_batches, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`", "dtype-mismatch", ("dtype", "bfloat16")),
    ("worker 3: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.", "collective-comm", ("nccl_error", "ncclRemoteError")),
    ("jax.errors.JaxRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Id: PjRT_Client_Connect", "timeout-hang", ("status", "DEADLINE_EXCEEDED")),
    ("health-check: GPU 3 reported XID 79, draining node", "hardware-fault", ("xid", 79)),
    ("2024-Jan-05 10:00:01.0001 1234:1234 ERROR  NRT:nrt_execute  Execution failed with NRT_EXEC_OOB", "illegal-memory-access", ("nrt_status", "NRT_EXEC_OOB")),
    ("ERROR 4242 [neuronx-cc]: [NCC_EOOM001] The combined memory needed for the model's activation tensors exceeds the high-bandwidth memory limit.", "oom", ("ncc_code", "NCC_EOOM001")),
    ("FloatingPointError: invalid value (nan) encountered in jit(dot_general)", "numerical-mismatch", ("exception", "FloatingPointError")),
])
def test_a_code_alone_decides_the_family_and_keeps_the_code_as_a_fact(text, family, fact):
    d = diagnose_text(text + "\n")
    assert d.family == family, d.signature
    assert d.facts.get(fact[0]) == fact[1], d.facts


def test_support_codes_are_low_confidence_and_lose_to_a_message():
    """A bare code is support evidence: lower confidence than a recognised message, and any hard
    root in the log wins over it (here the OOM message over CUBLAS_STATUS_NOT_SUPPORTED's dtype)."""
    bare = diagnose_text("numba.cuda.cudadrv.driver.CudaAPIError: [700] Call to cuMemcpyDtoH results in UNKNOWN_CUDA_ERROR\n")
    hard = diagnose_text("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert bare.family == hard.family == "illegal-memory-access"
    assert bare.confidence < hard.confidence
    both = diagnose_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity)\n"
                         "CUBLAS_STATUS_NOT_SUPPORTED when calling cublasGemmEx(... CUDA_R_16BF ...)\n")
    assert both.family == "oom" and not both.signature.endswith(".code.dnn-not-supported-dtype")


@pytest.mark.parametrize("text", [
    "CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasLtMatmul`",      # no dtype beside it: no family
    "CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm`",        # ambiguous: left out of the table
    "cudaErrorUnknown",
    "Xid errors are listed in the NVIDIA docs",
])
def test_ambiguous_or_incomplete_codes_name_no_family(text):
    d = diagnose_text(text + "\n")
    assert ".code." not in (d.signature or ""), d.signature


def test_a_table_without_source_or_with_a_broken_probe_is_refused(tmp_path, monkeypatch):
    good = codes.TABLE.read_text()
    bad = tmp_path / "codes.toml"
    bad.write_text(good.replace('source = "https://abseil.io', 'source = "abseil.io', 1)
                   .replace('"https://abseil.io/docs/cpp/guides/status-codes"', '"abseil.io/docs"', 1))
    with pytest.raises(codes.CodeTableError, match="source"):
        codes.raw_signatures(bad)
    bad.write_text(good.replace('probe = "node gpu-12 reported Xid {number}"', 'probe = "node gpu-12 reported it"'))
    with pytest.raises(codes.CodeTableError, match="does not match its template"):
        codes.raw_signatures(bad)


def test_generated_signatures_are_in_the_knowledge_base_with_examples_and_no_match():
    gen = [s for s in load_all() if ".code." in s.id]
    assert len({s.id.split(".code.")[1].split(".")[0] for s in gen}) == len(TABLES)
    for s in gen:
        assert s.examples and s.counterexamples and s.references, s.id
        assert s.file.endswith("codes.toml")


def test_a_broken_table_stops_loading_with_the_file_named(tmp_path, monkeypatch):
    from signatures import loader

    bad = tmp_path / "codes.toml"
    bad.write_text(codes.TABLE.read_text().replace('family = "hardware-fault"\norigin = "hardware"\nmeaning = "NVLink error"',
                                                   'origin = "hardware"\nmeaning = "NVLink error"'))
    monkeypatch.setattr(codes, "TABLE", bad)
    with pytest.raises(SignatureError, match=str(bad)):
        loader.load_code_tables()
