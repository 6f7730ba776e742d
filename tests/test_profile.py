"""diagnose profile on exports in each tool's documented format.

- ncu CSV: Nsight Compute CLI documentation, options --csv and --page details|raw ("the details page shows
  sections, metrics and rule results"; raw: one column per metric, units in the second row). The fixtures in
  tests/fixtures/profile/ follow that layout, ==PROF== lines and a German-locale file included.
- nsys SQLite: Nsight Systems User Guide, "Exporter" / "SQLite Schema Reference" (CUPTI_ACTIVITY_KIND_KERNEL,
  _MEMCPY, _RUNTIME, StringIds); built here with sqlite3 from that schema.
- nsys stats CSV: Nsight Systems "Report Scripts", cuda_gpu_kern_sum columns.
- Chrome trace: the Trace Event Format document (traceEvents, ph "X", ts/dur in microseconds); a real
  torch.profiler export is made on the CPU when torch is installed.
"""
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from diagnose.profile import ProfileError, compare, read_one, read_paths
from diagnose.profile.ncu import number

FIX = Path(__file__).parent / "fixtures" / "profile"


def ids(findings, kernel=None):
    return {f.id for f in findings if kernel is None or kernel in f.title}


def test_locale_numbers():
    assert number("1,234.5") == 1234.5 and number("1.234,5") == 1234.5 and number("45,17") == 45.17
    assert number("16,777,216") == 16777216 and number("7.864.320") == 7864320 and number("n/a") is None
    assert number("12.5%") == 12.5


def test_ncu_details_verdicts():
    rep = read_paths([FIX / "ncu_details.csv"])
    assert not rep.errors
    f = rep.findings
    assert "profile.bound.memory" in ids(f, "transpose")            # memory 71% > 60%, compute 45%
    assert "profile.bound.launch" in ids(f, "tiny_scale")           # 2.3 us, nothing busy
    assert "profile.bound.latency" in ids(f, "gemm_regs")           # 31% / 22%, 1.2 ms
    occ = next(x for x in f if x.id == "profile.occupancy.theoretical-low")
    assert "gemm_regs" in occ.title and "registers" in occ.title and "168 registers" in occ.title
    assert any(x.id == "profile.occupancy.achieved-low" and "tiny_scale" in x.title for x in f)
    rule = next(x for x in f if x.id == "profile.ncu-rule.SharedMemoryConflicts")
    assert "32.0 - way bank conflict" in rule.title and "44%" in rule.title
    # the duration was read in its unit: 25.89 usecond, 1.21 msecond
    bound = next(x for x in f if x.id == "profile.bound.memory")
    assert bound.facts["duration"] == pytest.approx(25890) and bound.evidence[0].line is not None


def test_ncu_raw_conflicts_coalescing_intensity_and_stalls():
    rep = read_paths([FIX / "ncu_raw_before.csv", FIX / "ncu_raw_after_de_locale.csv"], device="H100 SXM")
    assert not rep.errors, rep.errors
    f = rep.findings
    unc = next(x for x in f if x.id == "profile.uncoalesced")
    assert "transpose_naive" in unc.title and "32.0 sectors per request" in unc.title
    bank = next(x for x in f if x.id == "profile.bank-conflicts")
    assert "transpose_tiled" in bank.title and "97%" in bank.title and "31.0-way" in bank.title
    stalls = next(x for x in f if x.id == "profile.stalls" and "naive" in x.title)
    assert stalls.title.index("long scoreboard") < stalls.title.index("barrier")


def test_compare_before_after_and_the_ncu_caveat():
    out = compare(read_one(FIX / "ncu_raw_before.csv"), read_one(FIX / "ncu_raw_after_de_locale.csv"))
    total = next(x for x in out if x.id == "profile.compare.total")
    assert "1.87x faster" in total.title and total.severity == "info"
    assert any(x.id == "profile.compare.ncu-durations" and "clock" in x.title for x in out)
    assert any(x.id == "profile.compare.kernels-differ" for x in out)      # naive vs tiled: renamed kernel
    slower = compare(read_one(FIX / "ncu_raw_after_de_locale.csv"), read_one(FIX / "ncu_raw_before.csv"))
    assert next(x for x in slower if x.id == "profile.compare.total").severity == "error"


def test_truncated_and_wrong_files_name_the_file(tmp_path):
    with pytest.raises(ProfileError, match=r"ncu_details_truncated.csv:\d+: row has \d+ of 20 columns"):
        read_one(FIX / "ncu_details_truncated.csv")
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    with pytest.raises(ProfileError, match="notes.txt: not a profiler export"):
        read_one(other)
    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).execute("CREATE TABLE x (a)").connection.commit()
    with pytest.raises(ProfileError, match="no CUPTI_ACTIVITY_KIND_KERNEL table"):
        read_one(empty)
    prof_only = tmp_path / "p.csv"
    prof_only.write_text("==PROF== Connected to process 1\n==PROF== Disconnected from process 1\n")
    with pytest.raises(ProfileError, match="no CSV table"):
        read_one(prof_only)


def _nsys_db(path, kernels, copies=(), syncs=()):
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
            streamId INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER,
            blockZ INTEGER, registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER,
            shortName INTEGER NOT NULL, demangledName INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
            streamId INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
            nameId INTEGER NOT NULL, correlationId INTEGER);
    """)
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "add_kernel"), (2, "cudaDeviceSynchronize_v3020"),
                                                          (3, "gemm")])
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,0,7,1,1,1,256,1,1,32,0,0,?,?)",
                   [(s, e, n, n) for s, e, n in kernels])
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,0,7,?,?)", copies)
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,2,0)", syncs)
    db.commit()
    db.close()


def test_nsys_sqlite_timeline(tmp_path):
    # 200 launches of a 3 us kernel every 20 us, a 1 MB HtoD copy and a device sync before each
    kernels = [(i * 20_000, i * 20_000 + 3_000, 1) for i in range(200)]
    copies = [(i * 20_000 - 9_000, i * 20_000 - 4_000, 1 << 20, 1) for i in range(1, 200)]
    syncs = [(i * 20_000 - 2_000, i * 20_000 - 1_000) for i in range(1, 200)]
    db = tmp_path / "run.sqlite"
    _nsys_db(db, kernels, copies, syncs)
    f = read_paths([db]).findings
    got = ids(f)
    assert {"profile.timeline.gpu-idle", "profile.timeline.tiny-kernels", "profile.timeline.memcpy",
            "profile.timeline.syncs"} <= got
    idle = next(x for x in f if x.id == "profile.timeline.gpu-idle")
    assert 0.55 < idle.facts["idle_share"] < 0.65
    # a busy, well-fed timeline raises none of them
    busy = tmp_path / "busy.sqlite"
    _nsys_db(busy, [(i * 1_000_000, i * 1_000_000 + 990_000, 3) for i in range(20)])
    assert not ids(read_paths([busy]).findings) & {"profile.timeline.gpu-idle", "profile.timeline.tiny-kernels",
                                                    "profile.timeline.memcpy", "profile.timeline.syncs"}


def test_nsys_stats_csv():
    rep = read_paths([FIX / "nsys_kern_sum.csv"])
    top = next(x for x in rep.findings if x.id == "profile.top-kernels")
    assert "62%" in top.title and "40960 launches" in top.title


def test_chrome_trace_gpu_events(tmp_path):
    ev = [{"ph": "X", "cat": "kernel", "name": "triton_poi_fused_add_0", "ts": i * 50.0, "dur": 2.0, "pid": 0, "tid": 7}
          for i in range(300)]
    ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "ts": i * 50.0 + 3, "dur": 1.0,
            "pid": 1, "tid": 1} for i in range(300)]
    p = tmp_path / "trace.json"
    p.write_text(json.dumps({"schemaVersion": 1, "deviceProperties": [], "traceEvents": ev}))
    got = ids(read_paths([p]).findings)
    assert {"profile.timeline.tiny-kernels", "profile.timeline.gpu-idle", "profile.timeline.syncs"} <= got


def test_real_torch_profiler_cpu_trace_says_it_has_no_gpu_events(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        x = torch.randn(64, 64)
        for _ in range(3):
            x = x @ x
    path = tmp_path / "cpu_trace.json"
    prof.export_chrome_trace(str(path))
    rep = read_paths([path])
    assert not rep.errors
    note = next(x for x in rep.findings if x.id == "profile.note")
    assert "no GPU kernel events" in note.title


def test_cli_formats_and_exit_codes(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "cli", "profile", *map(str, a)],  # noqa: E731
                                    capture_output=True, text=True)
    r = run(FIX / "ncu_details.csv")
    assert r.returncode == 0, r.stderr
    assert max(len(line) for line in r.stdout.splitlines()) <= 80 and "memory-bound" in r.stdout
    j = run(FIX / "ncu_details.csv", "--json")
    assert all(json.loads(line)["reader"] == "profile" for line in j.stdout.splitlines())
    c = run("--compare", FIX / "ncu_raw_after_de_locale.csv", FIX / "ncu_raw_before.csv")
    assert c.returncode == 1 and "slower" in c.stdout
    bad = run(tmp_path / "missing.csv")
    assert bad.returncode == 2 and "missing.csv: no such file" in bad.stderr


CAPTURED = sorted((Path(__file__).resolve().parent.parent / "corpus" / "gpu" / "profiles").glob("*"))


@pytest.mark.parametrize("path", [p for p in CAPTURED if p.suffix in (".csv", ".sqlite", ".json") and p.name != "env.json"]
                         or [None], ids=lambda p: p.name if p else "none-captured")
def test_real_gpu_profiles_when_captured(path):
    # corpus/gpu/run.sh writes these on a real GPU (ncu CSV, nsys SQLite, torch.profiler trace)
    if path is None:
        pytest.skip("no GPU profiles captured yet: run corpus/gpu/run.sh on a GPU machine")
    rep = read_paths([path])
    assert not rep.errors, rep.errors
    assert rep.findings
