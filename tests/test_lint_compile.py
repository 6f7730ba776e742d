"""The lint fixtures are real code: the correct CUDA kernels compile with nvcc and the correct Triton
kernels compile for an sm_90 target (no GPU needed); the compile-error rules' bugs really fail to
compile, with the message the rule names; the shared-memory estimate equals what Triton allocates."""
import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

from diagnose.lint import lint_file

pytestmark = pytest.mark.slow

FIX = Path(__file__).parent / "fixtures" / "lint"
CLEAN = FIX / "clean"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")


def _nvcc(path, tmp_path):
    return subprocess.run(["nvcc", "-c", "-arch=sm_90", "-o", str(tmp_path / "out.o"), str(path)],
                          capture_output=True, text=True, timeout=300)


@needs_nvcc
@pytest.mark.parametrize("name", sorted(p.name for p in CLEAN.glob("*.cu")))
def test_clean_cuda_kernels_compile(name, tmp_path):
    r = _nvcc(CLEAN / name, tmp_path)
    assert r.returncode == 0, r.stderr


@needs_nvcc
@pytest.mark.parametrize("fixture,message", [
    ("cuda.legacy-shuffle.cu", 'identifier "__shfl_down" is undefined'),
    ("cuda.static-smem-over-48k.cu", "uses too much shared data"),
])
def test_compile_error_rules_match_nvcc(fixture, message, tmp_path):
    assert any(f.severity == "error" for f in lint_file(FIX / "rules" / fixture))
    r = _nvcc(FIX / "rules" / fixture, tmp_path)
    assert r.returncode != 0 and message in r.stdout + r.stderr, r.stdout + r.stderr


def _module(path):
    pytest.importorskip("triton")
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _compile(fn, sig, consts, cc=90, attrs=None, **options):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from triton.runtime.jit import JITFunction

    while not isinstance(fn, JITFunction):     # an Autotuner / Heuristics wraps the JITFunction
        fn = fn.fn
    full = dict(sig)
    for k in consts:
        full[k] = "constexpr"
    src = ASTSource(fn, signature=full, constexprs=consts, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", cc, 32), options=options or None)


I32 = "i32"
MM_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": I32, "N": I32, "K": I32, "stride_am": I32,
          "stride_ak": I32, "stride_bk": I32, "stride_bn": I32, "stride_cm": I32, "stride_cn": I32}
TRITON = {
    "triton_vector_add.py": ("add_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32",
                                            "n_elements": I32}, {"BLOCK_SIZE": 1024}),
    "triton_softmax.py": ("softmax_kernel", {"output_ptr": "*fp32", "input_ptr": "*fp32", "input_row_stride": I32,
                                             "output_row_stride": I32, "n_rows": I32, "n_cols": I32},
                          {"BLOCK_SIZE": 1024, "num_stages": 2}),
    "triton_layernorm.py": ("_layer_norm_fwd_fused", {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16",
                                                      "Mean": "*fp32", "Rstd": "*fp32", "stride": I32, "N": I32,
                                                      "eps": "fp32"}, {"BLOCK_SIZE": 1024}),
    "triton_matmul.py": ("matmul_kernel", MM_SIG, {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64,
                                                   "GROUP_SIZE_M": 8}),
    "triton_attention.py": ("_attn_fwd", {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32",
                                          "stride_qh": I32, "stride_qm": I32, "stride_kh": I32, "stride_kn": I32,
                                          "stride_vh": I32, "stride_vn": I32, "stride_oh": I32, "stride_om": I32,
                                          "N_CTX": I32}, {"BLOCK_M": 64, "BLOCK_N": 64, "HEAD_DIM": 64}),
}


@pytest.mark.parametrize("name", sorted(TRITON))
def test_clean_triton_kernels_compile_for_sm90(name):
    mod = _module(CLEAN / name)
    kname, sig, consts = TRITON[name]
    k = _compile(getattr(mod, kname), sig, consts)
    assert "ptx" in k.asm and k.metadata.shared >= 0


def test_non_pow2_arange_really_fails():
    import triton

    mod = _module(FIX / "rules" / "triton.non-pow2-arange.py")
    with pytest.raises(triton.compiler.errors.CompilationError, match="power of 2"):
        _compile(mod.plain, {"x_ptr": "*fp32", "n": I32}, {"BLOCK": 96})
    mod = _module(FIX / "rules" / "triton.arange-runtime-bound.py")
    with pytest.raises(triton.compiler.errors.CompilationError, match="constexpr"):
        _compile(mod.bad, {"x_ptr": "*fp32", "n": I32}, {"BLOCK": 64})


@pytest.mark.parametrize("cc,target", [(80, "sm_80"), (90, "sm_90")])
@pytest.mark.parametrize("stages", [3, 4])
def test_shared_memory_estimate_equals_triton(tmp_path, cc, target, stages):
    """The estimate of lint.triton.shared-memory-estimate against Triton's own allocation for the
    tutorial matmul, compiled as a real launch specialises it (16-byte divisible pointers and sizes,
    unit inner strides)."""
    mod = _module(CLEAN / "triton_matmul.py")
    consts = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
              "stride_ak": 1, "stride_bn": 1, "stride_cn": 1}
    sig = {k: v for k, v in MM_SIG.items() if k not in consts}
    attrs = {(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 3, 4, 5, 6, 8, 10)}
    k = _compile(mod.matmul_kernel, sig, consts, cc=cc, attrs=attrs, num_stages=stages, num_warps=8)
    # the same kernel with this one config, linted for that target with a tiny limit, reports its estimate
    text = (CLEAN / "triton_matmul.py").read_text()
    start = text.index("@triton.autotune(")
    end = text.index("@triton.jit")
    cfg = (f'@triton.autotune(configs=[triton.Config({{"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, '
           f'"GROUP_SIZE_M": 8}}, num_stages={stages}, num_warps=8)], key=["M"])\n')
    one = tmp_path / "mm.py"
    one.write_text(text[:start] + cfg + text[end:])
    from diagnose.lint import engine

    found = []
    saved = engine.targets()["target"][target]["shared_optin"]
    engine.targets()["target"][target]["shared_optin"] = 1     # every estimate is over: it is reported
    try:
        found = [f for f in lint_file(one, target=target) if f.id == "lint.triton.shared-memory-estimate"]
    finally:
        engine.targets()["target"][target]["shared_optin"] = saved
    assert len(found) == 1
    assert found[0].facts["estimate_bytes"] == k.metadata.shared, (found[0].facts, k.metadata.shared)
