"""Throughput benchmark: `diagnose classify` vs ripgrep scanning the same files for the same patterns.

    python -m bench.throughput [--mb 500] [--files 10000] [--seed 7] [--skip-big]

Generates (once, cached under bench/_data) a seeded corpus of mixed-size logs (long tail up to
50 MB, ~30 % holding a failure at a random position, the rest noise), then times in the same run:
  - `diagnose classify --format jsonl DIR`  (all cores)
  - `rg -j2 --no-unicode --dfa-size-limit 2G -c -f PATTERNS DIR` with the patterns exported by
    `diagnose signatures export --format rg`
and prints both throughputs, their ratio and peak memory. Then classifies one 5 GB file with
--jobs 1 and prints its peak RSS (goal: under 200 MB).
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
DATA = HERE / "_data"
BIN = Path(sys.executable).parent / "diagnose"

NOISE = [
    "Epoch {e} | step {s:>6} | loss {l:.4f} | lr {lr:.2e} | grad_norm {g:.3f} | tokens/s {t}",
    "INFO {d} {h}:{m}:{sec} trainer.py:{n}] saving checkpoint to /data/ckpt/step_{s}.pt",
    "[rank{r}]: iteration {s}: throughput {t} samples/s, mem allocated {a} MiB, reserved {b} MiB",
    "{d} {h}:{m}:{sec},{ms} - INFO - dataloader worker {r} prefetched {n} batches",
    "W{d2} {h}:{m}:{sec}.{ms} {pid} torch/_dynamo/convert_frame.py:{n}] torch._dynamo hit config.recompile_limit (8)",
    "ptxas info    : Used {n} registers, used 1 barriers, {a} bytes smem, 400 bytes cmem[0]",
    "| {name:<24} | {a:>8.3f} ms | {b:>8.3f} ms | {g:>5.2f}x |",
    "  warnings.warn(  # TF32 is enabled for matmuls; set torch.backends.cuda.matmul.allow_tf32=False for full precision",
    "DEBUG:urllib3.connectionpool:Starting new HTTPS connection (1): huggingface.co:443",
    "autotune: config BLOCK_M={bm}, BLOCK_N={bn}, num_warps={w}, num_stages={st}: {a:.3f} us",
    "{name}: shape=({bm}, {bn}) dtype=torch.bfloat16 max_abs_err={l:.2e} OK",
    "  0%|          | 0/{n} [00:00<?, ?it/s]\r 50%|#####     | {s}/{n} [00:01<00:01, {t}it/s]\r100%|##########| {n}/{n}",
]
NAMES = ["flash_attn_fwd", "matmul_kernel", "layer_norm", "softmax", "rms_norm_bwd", "fused_moe", "rope_embed"]


def _noise_line(rng: random.Random) -> str:
    t = rng.choice(NOISE)
    return t.format(e=rng.randint(0, 99), s=rng.randint(0, 999999), l=rng.random() * 4, lr=rng.random() * 1e-3,
                    g=rng.random() * 5, t=rng.randint(100, 99999), d=f"{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                    d2=f"{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}", h=f"{rng.randint(0, 23):02d}",
                    m=f"{rng.randint(0, 59):02d}", sec=f"{rng.randint(0, 59):02d}", ms=rng.randint(100, 999),
                    n=rng.randint(1, 4000), r=rng.randint(0, 7), a=rng.random() * 80000, b=rng.random() * 80000,
                    pid=rng.randint(1000, 99999), name=rng.choice(NAMES), bm=rng.choice([16, 32, 64, 128]),
                    bn=rng.choice([32, 64, 128, 256]), w=rng.choice([4, 8]), st=rng.randint(1, 5))


def _failure_lines() -> list[str]:
    from signatures.loader import load_all

    return [ex.line for s in load_all() if s.role == "root" for ex in s.examples]


def _sizes(rng: random.Random, n: int, total: int) -> list[int]:
    # Pareto long tail: most files ~10-50 KB, a few up to 50 MB.
    raw = [min(50 << 20, int(4000 * rng.paretovariate(0.9))) for _ in range(n)]
    scale = total / sum(raw)
    return [max(200, min(50 << 20, int(s * scale))) for s in raw]


def generate(mb: int, files: int, seed: int) -> Path:
    out = DATA / f"logs-{mb}mb-{files}-s{seed}"
    if (out / ".complete").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    rng = random.Random(seed)
    failures = _failure_lines()
    block = "\n".join(_noise_line(rng) for _ in range(20000)).encode() + b"\n"   # reused noise, cheap to write
    for i, size in enumerate(_sizes(rng, files, mb << 20)):
        with open(out / f"task{i:05d}.log", "wb") as f:
            fail_at = rng.randint(0, size) if rng.random() < 0.30 else -1
            written = 0
            while written < size:
                start = rng.randint(0, len(block) // 2)
                piece = block[start: start + min(size - written, len(block) - start)]
                piece = piece[: piece.rfind(b"\n") + 1] or piece
                if 0 <= fail_at < written + len(piece):
                    piece += (rng.choice(failures) + "\n").encode()
                    fail_at = -1
                f.write(piece)
                written += len(piece)
    (out / ".complete").write_text("ok")
    return out


def _dir_bytes(d: Path) -> int:
    return sum(p.stat().st_size for p in d.iterdir() if p.is_file() and not p.name.startswith("."))


def _timed(cmd: list[str], **kw) -> tuple[float, int]:
    """Wall seconds and the peak RSS (KiB) of the largest child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)
    wall = time.perf_counter() - t
    return wall, max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def big_file_rss(gb: int) -> None:
    path = DATA / f"big-{gb}gb.log"
    if not path.exists() or path.stat().st_size < gb << 30:
        rng = random.Random(1)
        block = "\n".join(_noise_line(rng) for _ in range(50000)).encode() + b"\n"
        with open(path, "wb") as f:
            written = 0
            while written < gb << 30:
                f.write(block)
                written += len(block)
            f.write(b"RuntimeError: CUDA error: an illegal memory access was encountered\n")
    # a fresh interpreter so the RSS is the classifier's alone
    code = ("import resource,subprocess,sys,time;t=time.perf_counter();"
            f"subprocess.run([{str(BIN)!r},'classify','--jobs','1','--format','jsonl',{str(path)!r}],stdout=subprocess.DEVNULL,check=True);"
            "w=time.perf_counter()-t;print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    wall, rss = float(out[0]), int(out[1])
    size = path.stat().st_size
    print(f"5 GB single file  : {size / 1e9:.2f} GB in {wall:.1f} s ({size / wall / 1e6:.0f} MB/s, --jobs 1), "
          f"peak RSS {rss / 1024:.0f} MB (goal < 200 MB): {'OK' if rss / 1024 < 200 else 'OVER'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=500)
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--skip-big", action="store_true", help="skip the 5 GB single-file memory check")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each tool (alternating); medians compared")
    args = ap.parse_args()

    t = time.perf_counter()
    d = generate(args.mb, args.files, args.seed)
    total = _dir_bytes(d)
    n = sum(1 for p in d.iterdir() if not p.name.startswith("."))
    print(f"corpus: {n} files, {total / 1e6:.0f} MB in {d} (ready in {time.perf_counter() - t:.1f} s)")

    pats = DATA / "patterns.rg"
    pats.write_text(subprocess.run([str(BIN), "signatures", "export", "--format", "rg"], capture_output=True,
                                   text=True, check=True).stdout)
    npat = len(pats.read_text().splitlines())

    # warm the page cache and the hyperscan database cache so both tools read from memory
    subprocess.run(["cat"] + [str(p) for p in sorted(d.iterdir())[:1]], stdout=subprocess.DEVNULL)
    for p in d.iterdir():
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass
    subprocess.run([str(BIN), "classify", "--format", "jsonl", str(sorted(d.iterdir())[1])], stdout=subprocess.DEVNULL)

    # Alternate the two tools, several runs each, and compare medians: on a shared 2-core machine a
    # single run of either moves by a third from one minute to the next.
    rg = shutil.which("rg")
    ours_runs, theirs_runs, rss = [], [], 0
    for _ in range(args.runs):
        wall, peak = _timed([str(BIN), "classify", "--format", "jsonl", str(d)])
        ours_runs.append(wall)
        rss = max(rss, peak)
        if rg:
            theirs_runs.append(_timed([rg, "-j2", "--no-unicode", "--dfa-size-limit", "2G", "-c", "-f",
                                       str(pats), str(d)])[0])
    ours = statistics.median(ours_runs)
    print(f"diagnose classify : {ours:6.2f} s  {total / ours / 1e6:7.0f} MB/s   (median of {len(ours_runs)}: "
          f"{' '.join(f'{x:.2f}' for x in ours_runs)})   peak RSS of one process {rss / 1024:.0f} MB")
    if rg:
        theirs = statistics.median(theirs_runs)
        print(f"ripgrep -j2       : {theirs:6.2f} s  {total / theirs / 1e6:7.0f} MB/s   (median of {len(theirs_runs)}: "
              f"{' '.join(f'{x:.2f}' for x in theirs_runs)}; {npat} patterns)")
        print(f"ratio (diagnose / ripgrep throughput): {theirs / ours:.2f}  (goal >= 1.0)")
    else:
        print("ripgrep not installed (apt-get install ripgrep): no baseline")
    if not args.skip_big:
        big_file_rss(5)


if __name__ == "__main__":
    main()
