"""Throughput and memory benchmark: `diagnose classify` vs ripgrep on the shared perf corpus.

    python -m bench.throughput [--runs 3] [--corpus DIR --patterns FILE] [--skip-big]

1. The shared perf corpus (../shared/perf/gen_corpus.py: 20,000 realistic logs, 1 GB, seed 1234;
   about a quarter hold ordinary non-GPU failures that must end `unknown`), generated once under
   bench/_data. Timed in the same run, alternating, medians compared:
     - `diagnose classify --format jsonl DIR`  (all cores)
     - `rg -j2 --no-ignore --no-unicode --dfa-size-limit 2G -c -f patterns.rg DIR` with the
       generator's own patterns for the same errors (the fair baseline).
   Prints both throughputs and the ratio (goal >= 1.5).
2. Peak RSS of `classify --jobs 1` on a 5 GB plain log and on a 1 GB JSON-lines log whose
   records hold escaped tracebacks (long lines), both generated under bench/_data (goal < 200 MB each).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
DATA = HERE / "_data"
BIN = Path(sys.executable).parent / "diagnose"
SHARED_PERF = HERE.parent.parent / "shared" / "perf"

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


def shared_corpus(files: int, mb: int, seed: int, generator: Path = SHARED_PERF) -> tuple[Path, Path]:
    """The shared perf corpus and its ripgrep patterns, generated once (the generator is copied here:
    it writes patterns.rg beside itself, and ../shared is read-only in CI)."""
    out = DATA / f"perf-corpus-{files}-{mb}mb-s{seed}"
    gen = DATA / "perfgen"
    if (out / ".complete").exists() and (gen / "patterns.rg").exists():
        return out, gen / "patterns.rg"
    if not (generator / "gen_corpus.py").exists():
        sys.exit(f"{generator}/gen_corpus.py not found: run from a checkout with ../shared beside it, "
                 "or pass --generator DIR, or --corpus DIR --patterns FILE")
    shutil.rmtree(gen, ignore_errors=True)
    shutil.copytree(generator, gen, ignore=shutil.ignore_patterns("__pycache__", "corpus"))
    # gen_corpus.py imports CUDA_RT from `signatures`, the old name of its error_patterns module: a
    # one-line shim, so the project's own `signatures` package is not picked up instead
    shim = gen / "shim"
    shim.mkdir()
    (shim / "signatures.py").write_text("from error_patterns import CUDA_RT  # noqa: F401\n")
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=f"{shim}{os.pathsep}{gen}")
    subprocess.run([sys.executable, str(gen / "gen_corpus.py"), "--out", str(out), "--files", str(files),
                    "--total-mb", str(mb), "--seed", str(seed), "--procs", "2"], check=True, env=env, cwd=gen)
    (out / ".complete").write_text("ok")
    return out, gen / "patterns.rg"


def _dir_bytes(d: Path) -> tuple[int, int]:
    files = [p for p in d.rglob("*") if p.is_file() and not p.name.startswith(".")]
    return len(files), sum(p.stat().st_size for p in files)


def _timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def _peak_rss(path: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of `classify --jobs 1` on one file, in a fresh interpreter so the
    RSS is the classifier's alone."""
    code = ("import resource,subprocess,sys,time;t=time.perf_counter();"
            f"subprocess.run([{str(BIN)!r},'classify','--jobs','1','--format','jsonl',{str(path)!r}],stdout=subprocess.DEVNULL,check=True);"
            "w=time.perf_counter()-t;print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1])


def big_plain_log(gb: int, corpus: Path | None) -> Path:
    """A plain log of `gb` GB: the corpus's logs one after another (varied: every kind of noise and
    error event of the corpus, so chunk after chunk wakes a different set of patterns), repeated
    until the size is reached; plain training noise without a corpus. A known failure ends it."""
    path = DATA / f"big-{gb}gb{'-' + corpus.name if corpus else ''}.log"
    if path.exists() and path.stat().st_size >= gb << 30:
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    rng = random.Random(1)
    if corpus:
        parts = sorted(p for p in corpus.iterdir() if p.is_file() and not p.name.startswith("."))
        blocks = (p.read_bytes() for _ in iter(int, 1) for p in parts)
    else:
        block = "\n".join(_noise_line(rng) for _ in range(50000)).encode() + b"\n"
        blocks = iter(lambda: block, None)
    with open(str(path) + ".tmp", "wb") as f:
        written = 0
        for block in blocks:
            if written >= gb << 30:
                break
            f.write(block if block.endswith(b"\n") else block + b"\n")
            written += len(block)
        f.write(b"RuntimeError: CUDA error: an illegal memory access was encountered\n")
    os.replace(str(path) + ".tmp", path)
    return path


def jsonl_log(gb: int) -> Path:
    """A JSON-lines log of `gb` GB: one record per line, tracebacks escaped inside the message, so lines
    run to tens of KB (structured logging from a server or a cluster's log shipper)."""
    path = DATA / f"jsonl-{gb}gb.log"
    if path.exists() and path.stat().st_size >= gb << 30:
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    rng = random.Random(2)
    records = []
    for i in range(4000):
        if rng.random() < 0.1:
            frames = "".join(f'  File "/srv/app/mod{j}.py", line {rng.randint(1, 900)}, in handler_{j}\n'
                             f"    result = step_{j}(batch, cfg)\n" for j in range(rng.randint(20, 400)))
            msg = ("Traceback (most recent call last):\n" + frames +
                   rng.choice(["ValueError: bad batch shape", "KeyError: 'input_ids'",
                               "RuntimeError: CUDA error: device-side assert triggered"]) + "\n")
            rec = {"ts": f"2025-03-0{rng.randint(1, 9)}T10:{rng.randint(10, 59)}:00Z", "level": "ERROR",
                   "logger": "worker", "msg": msg}
        else:
            rec = {"ts": f"2025-03-0{rng.randint(1, 9)}T10:{rng.randint(10, 59)}:00Z", "level": "INFO",
                   "logger": "trainer", "msg": _noise_line(rng)}
        records.append(json.dumps(rec))
    block = ("\n".join(records) + "\n").encode()
    with open(str(path) + ".tmp", "wb") as f:
        written = 0
        while written < gb << 30:
            f.write(block)
            written += len(block)
        f.write(json.dumps({"level": "ERROR", "msg": "torch.OutOfMemoryError: CUDA out of memory. "
                            "Tried to allocate 2.00 GiB"}).encode() + b"\n")
    os.replace(str(path) + ".tmp", path)
    return path


def memory_check(label: str, path: Path) -> None:
    wall, rss = _peak_rss(path)
    size = path.stat().st_size
    print(f"{label:<18}: {size / 1e9:.2f} GB in {wall:.1f} s ({size / wall / 1e6:.0f} MB/s, --jobs 1), "
          f"peak RSS {rss / 1024:.0f} MB (goal < 200 MB): {'OK' if rss / 1024 < 200 else 'OVER'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--mb", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--generator", type=Path, default=SHARED_PERF, help="the shared perf generator's folder")
    ap.add_argument("--corpus", type=Path, help="bench this directory instead of the shared perf corpus")
    ap.add_argument("--patterns", type=Path, help="ripgrep patterns for --corpus")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each tool (alternating); medians compared")
    ap.add_argument("--skip-big", action="store_true", help="skip the 5 GB and 1 GB memory checks")
    args = ap.parse_args()

    t = time.perf_counter()
    if args.corpus:
        d, pats = args.corpus, args.patterns
    else:
        d, pats = shared_corpus(args.files, args.mb, args.seed, args.generator)
    n, total = _dir_bytes(d)
    print(f"corpus: {n} files, {total / 1e6:.0f} MB in {d} (ready in {time.perf_counter() - t:.1f} s)")

    # warm the page cache and the database cache so both tools read from memory
    for p in d.rglob("*"):
        if p.is_file():
            with open(p, "rb") as f:
                while f.read(1 << 24):
                    pass
    subprocess.run([str(BIN), "classify", "--format", "jsonl", str(next(d.glob("*")))], stdout=subprocess.DEVNULL)

    # Alternate the two tools and compare medians: on a shared machine a single run of either moves
    # by a third from one minute to the next.
    rg = shutil.which("rg")
    ours_runs, theirs_runs = [], []
    for _ in range(args.runs):
        ours_runs.append(_timed([str(BIN), "classify", "--format", "jsonl", str(d)]))
        if rg and pats:
            theirs_runs.append(_timed([rg, "-j2", "--no-ignore", "--no-unicode", "--dfa-size-limit", "2G", "-c",
                                       "-f", str(pats), str(d)]))
    ours = statistics.median(ours_runs)
    print(f"diagnose classify : {ours:6.2f} s  {total / ours / 1e6:7.0f} MB/s   (median of {len(ours_runs)}: "
          f"{' '.join(f'{x:.2f}' for x in ours_runs)}; {os.cpu_count()} cores)")
    if theirs_runs:
        theirs = statistics.median(theirs_runs)
        npat = len(Path(pats).read_text().splitlines())
        print(f"ripgrep -j2       : {theirs:6.2f} s  {total / theirs / 1e6:7.0f} MB/s   (median of {len(theirs_runs)}: "
              f"{' '.join(f'{x:.2f}' for x in theirs_runs)}; {npat} patterns)")
        print(f"ratio (diagnose / ripgrep throughput): {theirs / ours:.2f}  (goal >= 1.5)")
    else:
        print("ripgrep not installed (apt-get install ripgrep) or no patterns: no baseline")
    if not args.skip_big:
        memory_check("5 GB plain log", big_plain_log(5, d))
        memory_check("1 GB JSON lines", jsonl_log(1))


if __name__ == "__main__":
    main()
