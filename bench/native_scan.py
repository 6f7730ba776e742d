"""Would a native per-file core pay? The joint database's raw scan, wheel against system libhyperscan.

    python -m bench.native_scan [--corpus DIR] [--files N]      (make bench-native)

Builds the joint database's expressions (every ASCII pattern, the anchored ones loosened, as the
small-log path scans them) and the corpus's 64 KiB groups (as Matcher._scan_group builds them), then
times, in CPU seconds on one core:
  - the hyperscan wheel (what diagnose runs), with a no-op Python callback;
  - bench/native_scan.c against Debian's libhyperscan (`apt-get install libhyperscan-dev`, 5.4,
    fat runtime), with a C callback that finds each match's line start.
The difference is all a native scan could save; what it cannot save (the scan itself) is compared
with ripgrep's whole run. Skipped with a message when gcc or hs/hs.h is missing.
"""
from __future__ import annotations

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent


def export(corpus: Path, files: int | None, out: Path) -> tuple[Path, Path, list[bytes]]:
    from signatures import matcher as M
    from signatures.normalise import normalise_chunk

    m = M.default_matcher()
    ids = sorted(m.in_joint | m.loosened)
    exprs = out / "exprs.txt"
    exprs.write_text("".join(f"{i} {(M.loosen(m.raw[i]) if i in m.loosened else m.raw[i]).hex()}\n" for i in ids))
    names = sorted(os.listdir(corpus))[:files]
    bufs, cur, size = [], [b"\n"], 0
    for name in names:
        data = (corpus / name).read_bytes()
        if len(data) >= M.SMALL_FILE or b"\0" in data[:8192]:
            continue                     # big logs take the chunked path; binary ones are not scanned
        data = normalise_chunk(data)
        cur.append(data if data.endswith(b"\n") else data + b"\n")
        size += len(cur[-1])
        if size >= M.GROUP_BYTES:
            bufs.append(b"".join(cur))
            cur, size = [b"\n"], 0
    if len(cur) > 1:
        bufs.append(b"".join(cur))
    groups = out / "groups.bin"
    with open(groups, "wb") as f:
        for b in bufs:
            f.write(struct.pack("<Q", len(b)) + b)
    return exprs, groups, bufs


def wheel_seconds(bufs: list[bytes]) -> float:
    from signatures.matcher import default_matcher

    db = default_matcher()._joint
    best = None
    for _ in range(3):
        t = time.process_time()
        for b in bufs:
            db.scan(b, match_event_handler=lambda *a: False)
        s = time.process_time() - t
        best = s if best is None else min(best, s)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, help="this directory instead of the shared perf corpus (generated once)")
    ap.add_argument("--files", type=int, default=None, help="only the first N files")
    args = ap.parse_args(argv)
    if args.corpus is None:
        from bench.throughput import shared_corpus

        args.corpus = shared_corpus(20000, 1000, 1234)[0]
    if not args.corpus.is_dir():
        print(f"{args.corpus}: not a directory", file=sys.stderr)
        return 2
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None or not Path("/usr/include/hs/hs.h").exists():
        print("skipped: needs gcc and libhyperscan-dev (apt-get install libhyperscan-dev)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        exprs, groups, bufs = export(args.corpus, args.files, out)
        mb = sum(map(len, bufs)) / 2**20
        binary = out / "native_scan"
        subprocess.run([gcc, "-O2", "-o", str(binary), str(HERE / "native_scan.c"), "-lhs"], check=True)
        wheel = wheel_seconds(bufs)
        run = subprocess.run([str(binary), str(exprs), str(groups)], capture_output=True, text=True, check=True)
        native = min(float(line.split(" in ")[1].split()[0]) for line in run.stdout.splitlines() if line.startswith("native:"))
        print(run.stdout.splitlines()[0])
        print(f"{len(bufs)} groups, {mb:.0f} MB of small logs, one core, CPU seconds (best of 3):")
        print(f"  hyperscan wheel, Python no-op callback   {wheel:6.2f} s  ({mb / wheel:4.0f} MB/s)")
        print(f"  libhyperscan from C, line-start callback {native:6.2f} s  ({mb / native:4.0f} MB/s)")
        print(f"  native / wheel: {wheel / native:.2f}x faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
