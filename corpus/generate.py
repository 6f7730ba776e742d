"""Run the corpus scenarios for real, normalise their output into corpus/logs/<id>.log, write the manifest.

    python -m corpus.generate                 # every CPU scenario whose tools are installed
    python -m corpus.generate --only ID ...   # some of them (ids or fnmatch patterns)
    python -m corpus.generate --check         # rerun and report every scenario whose log differs
    python -m corpus.generate --gpu           # the GPU scenarios (corpus/gpu/run.sh wraps this)

Scenarios are declared in corpus/scenarios/<framework>/scenarios.toml. Each one copies its files into
a fresh work directory (corpus/_work/<id>, ignored by git), runs its shell command there with the
venv's python first on PATH, and keeps stdout and stderr merged, as a user's terminal shows them.
"""
from __future__ import annotations

import argparse
import concurrent.futures as futures
import difflib
import fnmatch
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

CORPUS = Path(__file__).resolve().parent
REPO = CORPUS.parent
SCENARIOS = CORPUS / "scenarios"
LOGS = CORPUS / "logs"
MANIFEST = CORPUS / "manifest.tsv"
WORK = CORPUS / "_work"
COLUMNS = ("id", "family", "origin", "framework", "scenario", "command", "expected_facts", "machine")
CPU_MACHINE = "cpu-only (no GPU)"

# Python modules a scenario may need, by the name used in `needs`.
MODULES = {"torch": "torch", "triton": "triton", "jax": "jax", "numpy": "numpy",
           "pynvml": "pynvml", "cuda-bindings": "cuda.bindings", "absl": "absl"}


@dataclass
class Scenario:
    id: str
    family: str
    origin: str
    framework: str
    files: list[str]
    command: str
    expected_facts: dict = field(default_factory=dict)
    needs: list[str] = field(default_factory=list)
    timeout: int = 120
    gpu: bool = False
    env: dict = field(default_factory=dict)
    folder: Path = SCENARIOS

    @property
    def scenario_path(self) -> str:
        return " ".join(str((self.folder / f).relative_to(REPO)) for f in self.files)


def load_scenarios(root: Path = SCENARIOS) -> list[Scenario]:
    out: list[Scenario] = []
    for toml in sorted(root.glob("*/scenarios.toml")):
        data = tomllib.loads(toml.read_text())
        framework_default = data.get("framework", toml.parent.name)
        for raw in data.get("scenario", []):
            raw = dict(raw)
            files = raw.pop("files", None) or [raw.pop("file")]
            out.append(Scenario(framework=raw.pop("framework", framework_default), files=files,
                                gpu=raw.pop("gpu", data.get("gpu", False)), folder=toml.parent, **raw))
    return out


def missing_tools(s: Scenario) -> list[str]:
    missing = []
    for need in s.needs:
        if need in MODULES:
            import importlib.util
            try:
                found = importlib.util.find_spec(MODULES[need]) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                missing.append(need)
        elif shutil.which(need) is None:
            missing.append(need)
    return missing


# -- normalisation ------------------------------------------------------------------------------

def _path_replacements(work: Path) -> list[tuple[str, str]]:
    site = sysconfig.get_paths()["purelib"]
    pairs = [
        (str(work) + "/", ""), (str(work), "."),
        (site, "<site-packages>"),
        (sys.prefix, "<venv>"),
        (sysconfig.get_paths()["stdlib"], "<stdlib>"),
        (sys.base_prefix, "<python>"),
        (str(REPO) + "/", ""),
        (str(Path.home()), "~"),
    ]
    # resolved spellings too (a symlinked venv or work dir prints either way)
    more = [(os.path.realpath(a), b) for a, b in pairs if os.path.realpath(a) != a]
    return sorted({(a, b) for a, b in pairs + more if a}, key=lambda p: -len(p[0]))


_SUBS = [
    # nvcc's temporary files: /tmp/tmpxft_000022a3_00000000-6_x.ptx
    (re.compile(r"tmpxft_[0-9a-f]{8}_[0-9a-f]{8}"), "tmpxft_<id>"),
    (re.compile(r"/tmp/(?!tmpxft_)[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)*"), "/tmp/<tmp>"),
    # glog / absl / torch log prefixes: keep the level letter, drop date, time and thread id
    (re.compile(r"\b([IWEF])\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ "), r"\g<1>0000 00:00:00.000000 <tid> "),
    (re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?"), "<date>"),
    (re.compile(r"0x[0-9a-fA-F]{9,16}"), "0x<addr>"),
    (re.compile(r"\b(pid|PID|process|Process)([ =:]+)\d+"), r"\1\2<pid>"),
    (re.compile(r"\[pid=\d+\]"), "[pid=<pid>]"),
    (re.compile(r"\b\d+\.\d+ ?(ms|s|sec|secs|seconds|us|µs)\b"), r"<t>\1"),
    (re.compile(r"\b[0-9a-f]{32,64}\b"), "<hash>"),
    (re.compile(r"\b[A-Z2-7]{52}\b"), "<hash>"),        # triton's base32 cache keys
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
    (re.compile(r"\[127\.0\.0\.1\]:\d+"), "[127.0.0.1]:<port>"),     # gloo: "closed by peer [127.0.0.1]:28901"
    (re.compile(r"localhost:\d+"), "localhost:<port>"),
    (re.compile(r"\(pid \d+\)"), "(pid <pid>)"),
]


def normalise(text: str, work: Path) -> str:
    for old, new in _path_replacements(work):
        text = text.replace(old, new)
    for pattern, repl in _SUBS:
        text = pattern.sub(repl, text)
    text = text.replace("\r\n", "\n")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return text.rstrip("\n") + "\n"


# -- running ------------------------------------------------------------------------------------

def run_env(work: Path, extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRITON_", "JAX_", "XLA_", "TORCH_"))}
    env.update({
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", env.get("PATH", "/usr/bin:/bin")]),
        "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TERM": "dumb", "NO_COLOR": "1",
        "COLUMNS": "120", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8",
        "TRITON_CACHE_DIR": str(work / ".triton-cache"),
        "TORCHINDUCTOR_CACHE_DIR": str(work / ".inductor-cache"),
        "TMPDIR": "/tmp",
    })
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_scenario(s: Scenario, work_root: Path = WORK, timeout: float | None = None) -> tuple[str, int]:
    """Run one scenario in a fresh work directory; return its normalised log and exit status."""
    timeout = int(min(s.timeout, timeout or s.timeout))
    work = work_root / s.id
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for f in s.files:
        shutil.copy2(s.folder / f, work / Path(f).name)
    for helper in s.folder.glob("_*"):          # shared helpers of a framework folder
        if helper.is_file():
            shutil.copy2(helper, work / helper.name)
    proc = subprocess.Popen(["bash", "-c", s.command], cwd=work, env=run_env(work, s.env),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        out += f"\n[corpus.generate: killed after {timeout} s]\n".encode()
        rc = -9
    text = normalise(out.decode("utf-8", "replace"), work)
    shutil.rmtree(work, ignore_errors=True)
    return text, rc


# -- manifest -----------------------------------------------------------------------------------

def read_manifest(path: Path = MANIFEST) -> list[dict]:
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"))) for line in lines[1:] if line.strip()]


def manifest_row(s: Scenario, machine: str) -> dict:
    return {"id": s.id, "family": s.family, "origin": s.origin, "framework": s.framework,
            "scenario": s.scenario_path, "command": s.command.replace("\t", " ").replace("\n", " "),
            "expected_facts": json.dumps(s.expected_facts, sort_keys=True), "machine": machine}


def write_manifest(rows: list[dict], path: Path = MANIFEST) -> None:
    rows = sorted(rows, key=lambda r: r["id"])
    text = "\t".join(COLUMNS) + "\n" + "".join("\t".join(r[c] for c in COLUMNS) + "\n" for r in rows)
    path.write_text(text)


def cpu_machine() -> str:
    return CPU_MACHINE


def gpu_machine() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
        gpu = out[0] if out else "unknown GPU"
    except (OSError, subprocess.SubprocessError):
        gpu = "unknown GPU"
    return f"{gpu.replace(', ', ' driver ')}; captured {time.strftime('%Y-%m-%d')}"


# -- main ---------------------------------------------------------------------------------------

def select(scenarios: list[Scenario], only: list[str] | None, gpu: bool) -> list[Scenario]:
    chosen = [s for s in scenarios if s.gpu == gpu]
    if only:
        chosen = [s for s in chosen if any(fnmatch.fnmatch(s.id, pat) for pat in only)]
    return chosen


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m corpus.generate", description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", metavar="ID", help="scenario ids or fnmatch patterns")
    ap.add_argument("--check", action="store_true", help="rerun and report scenarios whose log differs")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--gpu", action="store_true", help="run the GPU scenarios (needs a device)")
    ap.add_argument("--deadline", type=float, default=0,
                    help="seconds: skip scenarios not started by then (the GPU script's overall limit)")
    ap.add_argument("--list", action="store_true", help="list the scenarios and whether their tools exist")
    args = ap.parse_args(argv)

    scenarios = load_scenarios()
    ids = [s.id for s in scenarios]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        print(f"duplicate scenario ids: {', '.join(sorted(dupes))}", file=sys.stderr)
        return 2
    chosen = select(scenarios, args.only, args.gpu)
    if args.list:
        for s in chosen:
            miss = missing_tools(s)
            print(f"{s.id:45} {s.family:24} {s.framework:9} {'missing: ' + ','.join(miss) if miss else 'ready'}")
        return 0
    runnable, skipped = [], []
    for s in chosen:
        miss = missing_tools(s)
        (skipped if miss else runnable).append((s, miss))
    for s, miss in skipped:
        print(f"skip  {s.id}: {', '.join(miss)} not installed", file=sys.stderr)
    runnable = [s for s, _ in runnable]

    start = time.monotonic()
    machine = gpu_machine() if args.gpu else cpu_machine()
    results: dict[str, tuple[str, int]] = {}

    def job(s: Scenario):
        if not args.deadline:
            return s, run_scenario(s)
        left = args.deadline - (time.monotonic() - start)
        if left < 15:
            return s, None
        return s, run_scenario(s, timeout=left)     # never runs past the deadline

    LOGS.mkdir(exist_ok=True)
    failures = 0
    with futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for s, result in pool.map(job, runnable):
            if result is None:
                print(f"late  {s.id}: not started before the {args.deadline:.0f} s deadline", file=sys.stderr)
                continue
            text, rc = result
            results[s.id] = result
            log = LOGS / f"{s.id}.log"
            if args.check:
                old = log.read_text() if log.exists() else ""
                if old != text:
                    failures += 1
                    print(f"DIFF  {s.id}", flush=True)
                    diff = difflib.unified_diff(old.splitlines(), text.splitlines(), "committed", "rerun", lineterm="", n=1)
                    for line in list(diff)[:30]:
                        print("      " + line)
                else:
                    print(f"same  {s.id}", flush=True)
            else:
                log.write_text(text)
                print(f"wrote {s.id} (exit {rc}, {len(text.splitlines())} lines)", flush=True)

    if args.check:
        print(f"{len(results) - failures} same, {failures} differ, {len(skipped)} skipped")
        return 1 if failures else 0

    # keep rows for scenarios not rerun this time (other tools, GPU captures), replace the rerun ones
    rows = {r["id"]: r for r in read_manifest()}
    known = {s.id for s in scenarios}
    rows = {i: r for i, r in rows.items() if i in known}
    by_id = {s.id: s for s in scenarios}
    for i in results:
        rows[i] = manifest_row(by_id[i], machine)
    for i, r in rows.items():       # labels edited in scenarios.toml apply to kept rows too
        if i not in results:
            rows[i] = manifest_row(by_id[i], r["machine"])
    write_manifest(list(rows.values()))
    print(f"{len(results)} logs written in {time.monotonic() - start:.0f} s; manifest has {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
