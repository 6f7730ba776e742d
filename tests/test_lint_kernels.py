"""False alarms are the enemy: correct kernels in the style of the public tutorials lint with zero
error findings, and seeded variants of them (a mask, a guard or the padding removed, a barrier
moved under a condition, a block shape changed) are each caught by the intended rule."""
from pathlib import Path

import pytest

from diagnose.lint import lint_file, lint_paths

CLEAN = Path(__file__).parent / "fixtures" / "lint" / "clean"
KERNELS = sorted(p.name for p in CLEAN.iterdir() if p.suffix in (".py", ".cu"))

# (clean kernel, text to replace (exactly once), replacement, the rule that must catch it)
SEEDS = [
    ("triton_vector_add.py", "x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets)",
     "lint.triton.unmasked-load"),
    ("triton_vector_add.py", "tl.store(output_ptr + offsets, output, mask=mask)", "tl.store(output_ptr + offsets, output)",
     "lint.triton.unmasked-store"),
    ("triton_vector_add.py", '(triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)', '(n_elements // meta["BLOCK_SIZE"],)',
     "lint.triton.grid-floor-division"),
    ("triton_vector_add.py", "BLOCK_SIZE=1024)", "BLOCK_SIZE=1000)", "lint.triton.non-pow2-arange"),
    ("triton_softmax.py", 'row = tl.load(input_ptrs, mask=mask, other=-float("inf"))', "row = tl.load(input_ptrs, mask=mask)",
     "lint.triton.masked-load-no-other"),
    ("triton_softmax.py", 'row = tl.load(input_ptrs, mask=mask, other=-float("inf"))', "row = tl.load(input_ptrs)",
     "lint.triton.unmasked-load"),
    ("triton_layernorm.py", "a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)",
     "a = tl.load(X + cols).to(tl.float32)", "lint.triton.unmasked-load"),
    ("triton_layernorm.py", "_mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)",
     "_mean = tl.zeros([BLOCK_SIZE], dtype=tl.float16)", "lint.triton.fp16-accumulator"),
    ("triton_matmul.py", "tl.store(c_ptrs, c, mask=c_mask)", "tl.store(c_ptrs, c)", "lint.triton.unmasked-store"),
    ("triton_matmul.py", "a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)",
     "a = tl.load(a_ptrs)", "lint.triton.unmasked-load"),
    ("triton_matmul.py", '"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}, num_stages=3',
     '"BLOCK_SIZE_M": 256, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 8}, num_stages=3',
     "lint.triton.shared-memory-estimate"),
    ("triton_attention.py", "k = tl.load(k_ptrs, mask=cols[None, :] < N_CTX, other=0.0)", "k = tl.load(k_ptrs)",
     "lint.triton.unmasked-load"),
    ("triton_attention.py", "grid = (triton.cdiv(N_CTX, BLOCK_M), H)", "grid = (triton.cdiv(N_CTX, BLOCK_M),)",
     "lint.triton.grid-axis-unsized"),
    ("cuda_saxpy.cu", "if (i < n) y[i] = a * x[i] + y[i];", "y[i] = a * x[i] + y[i];", "lint.cuda.unguarded-global-index"),
    ("cuda_saxpy.cu", "saxpy<<<(N + 255) / 256, 256>>>", "saxpy<<<N / 255, 255>>>", "lint.cuda.grid-floor-division"),
    ("cuda_saxpy.cu", "saxpy<<<(N + 255) / 256, 256>>>", "saxpy<<<(N + 2047) / 2048, 2048>>>", "lint.cuda.block-too-large"),
    ("cuda_saxpy.cu", "CUDA_CHECK(cudaGetLastError());\n", "", "lint.cuda.launch-unchecked"),
    ("cuda_saxpy.cu", "cudaMemcpy(d_x, x, N * sizeof(float), cudaMemcpyHostToDevice)",
     "cudaMemcpy(d_x, x, N, cudaMemcpyHostToDevice)", "lint.cuda.memcpy-missing-sizeof"),
    ("cuda_reduction.cu", "    if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];\n    __syncthreads();",
     "    if (tid < s) {\n      sdata[tid] = sum = sum + sdata[tid + s];\n      __syncthreads();\n    }",
     "lint.cuda.syncthreads-divergent"),
    ("cuda_reduction.cu", "    if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];\n    __syncthreads();",
     "    if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];", "lint.cuda.shared-race-missing-sync"),
    ("cuda_reduction.cu", "__shfl_down_sync(0xffffffff, v, offset)", "__shfl_down(v, offset)", "lint.cuda.legacy-shuffle"),
    ("cuda_transpose.cu", "__shared__ float tile[TILE_DIM][TILE_DIM + 1];", "__shared__ float tile[TILE_DIM][TILE_DIM];",
     "lint.cuda.shared-bank-conflict"),
    ("cuda_transpose.cu", "if (x < height && y + j < width) odata", "odata", "lint.cuda.unguarded-global-index"),
    ("cuda_tiled_gemm.cu", "    __syncthreads();\n    for (int k = 0;", "    for (int k = 0;", "lint.cuda.shared-race-missing-sync"),
    ("cuda_tiled_gemm.cu", "Bs[k][tx];\n    __syncthreads();\n  }", "Bs[k][tx];\n  }", "lint.cuda.shared-race-missing-sync"),
    ("cuda_tiled_gemm.cu", "if (row < M && col < N) C[row * N + col] = sum;", "C[row * N + col] = sum;",
     "lint.cuda.unguarded-global-index"),
    ("cuda_tiled_gemm.cu", "#define TILE 16", "#define TILE 64", "lint.cuda.block-too-large"),
    ("pallas_matmul.py", "pl.BlockSpec((bm, bk), lambda i, j, k: (i, k))", "pl.BlockSpec((bm, 100), lambda i, j, k: (i, k))",
     "lint.pallas.tpu-block-shape"),
    ("pallas_matmul.py", "pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))", "pl.BlockSpec((bk, bn), lambda j, k: (k, j))",
     "lint.pallas.index-map-arity"),
    ("pallas_matmul.py", '    assert m % bm == 0 and k % bk == 0 and n % bn == 0, "shapes must be multiples of the blocks"\n',
     "", "lint.pallas.grid-drops-remainder"),
    ("nki_add.py", "ix = offset_i_x + nl.arange(128)[:, None]", "ix = offset_i_x + nl.arange(256)[:, None]",
     "lint.nki.partition-dim-over-128"),
    ("nki_matmul.py", "TILE_N = nl.tile_size.gemm_moving_fmax  # 512", "TILE_N = 1024",
     "lint.nki.matmul-free-dim"),
    ("nki_matmul.py", "TILE_K = nl.tile_size.pmax  # 128", "TILE_K = 256", "lint.nki.partition-dim-over-128"),
]


@pytest.mark.parametrize("name", KERNELS)
def test_clean_kernel_has_no_error_findings(name):
    found = lint_file(CLEAN / name)
    errors = [f"{f.where} {f.id}: {f.title}" for f in found if f.severity == "error"]
    assert not errors, "\n".join(errors)


def test_clean_set_covers_the_tutorials_and_counts_its_warnings():
    assert len(KERNELS) >= 12
    report = lint_paths([CLEAN])
    assert report.files == len(KERNELS) and not report.errors
    # the warnings that remain are real latent limits, each one named here so a new one is seen:
    # the layer-norm tutorial's `row * stride` is int32 (wraps past 2^31 elements)
    # (one finding per kernel, its two products `X += row * stride`, `Y += row * stride` listed)
    assert sorted((Path(f.where).name.split(":")[0], f.id) for f in report.findings) == [
        ("triton_layernorm.py", "lint.triton.int32-offset-overflow")]
    assert next(f for f in report.findings).facts["products"] == ["row * stride", "row * stride"]


@pytest.mark.parametrize("name,old,new,rule", SEEDS, ids=[f"{s[0]}:{s[3]}" for s in SEEDS])
def test_seeded_bug_is_caught_by_its_rule(tmp_path, name, old, new, rule):
    text = (CLEAN / name).read_text()
    assert text.count(old) == 1, f"{name}: the seed text must occur exactly once"
    seeded = tmp_path / name
    seeded.write_text(text.replace(old, new))
    before = {f.id for f in lint_file(CLEAN / name)}
    after = lint_file(seeded)
    assert rule not in before
    hits = [f for f in after if f.id == rule]
    assert hits, f"{rule} missed the seeded bug; found {[f.id for f in after]}"
    assert hits[0].evidence[0].line and hits[0].evidence[0].text


def _package_dir(name):
    import importlib.util

    spec = importlib.util.find_spec(name)
    return Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else None


@pytest.mark.slow
def test_real_world_kernels_have_no_error_findings():
    """Kernels other people wrote and ship: every @triton.jit file of the installed torch and triton,
    and torch's CUDA headers (ATen/cuda, c10/cuda ...). Their invariants are often invisible to a
    linter (block-sparse blocks, power-of-2 sizes), so warnings may appear; errors must not."""
    roots = [d for d in (_package_dir("torch"), _package_dir("triton")) if d is not None]
    if not roots:
        pytest.skip("neither torch nor triton is installed")
    files = [p for r in roots for p in r.rglob("*.py") if "@triton.jit" in p.read_text(errors="replace")
             and "test" not in p.name]
    inc = roots[0] / "include" if roots[0].name == "torch" else None
    if inc is not None and inc.is_dir():
        files += [p for p in inc.rglob("*") if p.suffix in (".cu", ".cuh")]
    assert len(files) >= 20
    report = lint_paths(files)
    errors = [f"{f.where} {f.id}: {f.title}" for f in report.findings if f.severity == "error"]
    assert not errors, "\n".join(errors[:20])


def test_a_kernel_that_masks_nothing_gets_a_warning_not_an_error(tmp_path):
    # every mask removed: exact tiling may be what the author means (a weak signal is not a verdict);
    # one mask removed while the others stay: the overhang is evident, an error
    text = (CLEAN / "triton_vector_add.py").read_text()
    none = tmp_path / "none.py"
    none.write_text(text.replace(", mask=mask)", ")"))
    found = [f for f in lint_file(none) if f.id.startswith("lint.triton.unmasked")]
    assert len(found) == 3 and {f.severity for f in found} == {"warning"}
    assert "nothing in add_kernel is masked" in found[0].title
    one = tmp_path / "one.py"
    one.write_text(text.replace("y = tl.load(y_ptr + offsets, mask=mask)", "y = tl.load(y_ptr + offsets)"))
    found = [f for f in lint_file(one) if f.id.startswith("lint.triton.unmasked")]
    assert len(found) == 1 and found[0].severity == "error"


# The project's corpus scenarios were written (by others) to fail in one named way each, and their
# logs were produced by running them: where the bug is visible in the source, lint names it.
CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "scenarios"
SCENARIOS = [
    ("cuda/smem_static_256k.cu", "lint.cuda.static-smem-over-48k", "error"),
    ("cuda/smem_static_52k.cu", "lint.cuda.static-smem-over-48k", "error"),
    ("gpu/invalid_config.cu", "lint.cuda.block-too-large", "error"),
    ("gpu/smem_race.cu", "lint.cuda.shared-race-missing-sync", "error"),
    ("gpu/dynamic_smem.cu", "lint.cuda.dynamic-smem-no-attribute", "error"),
    ("gpu/oob_by_one.cu", "lint.cuda.guard-off-by-one", "error"),
    ("gpu/triton_out_of_resources.py", "lint.triton.shared-memory-estimate", "error"),
    ("triton/runtime_arange.py", "lint.triton.arange-runtime-bound", "error"),
    ("triton/interp_softmax_bug.py", "lint.triton.masked-load-bad-other", "warning"),
    ("pallas/block_rank.py", "lint.pallas.block-rank", "error"),
    ("pallas/index_map_arity.py", "lint.pallas.index-map-rank", "error"),
    ("pallas/tpu_block_not_divisible.py", "lint.pallas.tpu-block-shape", "warning"),
]
OK_SCENARIOS = ["triton/interp_ok.py", "triton/ok_compile.py", "pallas/interpret_ok.py", "pallas/tpu_ok_lowering.py"]


@pytest.mark.parametrize("path,rule,severity", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_corpus_scenario_bug_is_named(path, rule, severity):
    found = [f for f in lint_file(CORPUS / path) if f.id == rule]
    assert found and found[0].severity == severity


@pytest.mark.parametrize("path", OK_SCENARIOS)
def test_corpus_ok_scenarios_have_no_errors(path):
    assert not [f for f in lint_file(CORPUS / path) if f.severity == "error"]
