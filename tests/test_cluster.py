"""`classify --cluster`: a Dask scheduler and workers on loopback give the local run's rows, in order,
also when a worker is killed mid-batch. Skipped where the `cluster` extra is not installed."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests" / "fixtures" / "issues"
CORPUS = ROOT / "corpus" / "logs"


def _cli(*args, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=300, **kw)


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=40) as c:
        yield c


@pytest.fixture(scope="module")
def local_jsonl():
    r = _cli("classify", "--format", "jsonl", "--jobs", "2", str(LOGS), str(CORPUS))
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("mode", [[], ["--send-bytes"]], ids=["shared-fs", "send-bytes"])
def test_cluster_run_equals_local_run(cluster, local_jsonl, mode):
    r = _cli("classify", "--format", "jsonl", "--cluster", cluster.scheduler_address, *mode, str(LOGS), str(CORPUS))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") > 1000
    assert r.stdout == local_jsonl


def test_cluster_table_format_and_extra_signatures(cluster, tmp_path):
    sig = ROOT / "tests" / "fixtures" / "sigs"
    if not any(sig.glob("*.toml")):
        pytest.skip("no extra signature fixture")
    log = tmp_path / "a.log"
    log.write_text("Traceback (most recent call last):\nRuntimeError: CUDA error: an illegal memory access was encountered\n")
    local = _cli("classify", "--format", "csv", "--signatures", str(sig), str(log))
    remote = _cli("classify", "--format", "csv", "--signatures", str(sig), "--cluster", cluster.scheduler_address,
                  "--send-bytes", str(log))
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout


def test_unreachable_scheduler_is_a_usage_error(tmp_path):
    log = tmp_path / "a.log"
    log.write_text("fine\n")
    r = _cli("classify", "--cluster", "tcp://127.0.0.1:9", "--cluster-timeout", "1", str(log))
    assert r.returncode == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in r.stderr and "Traceback" not in r.stderr


def test_a_worker_killed_mid_batch_loses_no_row(local_jsonl):
    """A scheduler and two workers as separate processes; one worker is SIGKILLed while it holds tasks."""
    from diagnose import cluster as dcluster
    from diagnose.report import jsonl_line

    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", str(port), "--dashboard-address", ":0", "--no-show"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        client = _wait_client(addr)
        for _ in range(2):
            procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", addr, "--nworkers", "1",
                                           "--nthreads", "1", "--no-nanny", "--no-dashboard"], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        client.wait_for_workers(2, timeout=60)
        pids = client.run(os.getpid)                 # worker address -> pid
        killed: list = []

        def kill_one(_row):
            if killed:
                return
            busy = {w: keys for w, keys in client.processing().items() if keys}
            for w, keys in busy.items():
                if w in pids:
                    os.kill(pids[w], signal.SIGKILL)
                    killed.append((w, len(keys)))
                    return

        # a worker with one thread holds its next tasks queued: kill it at the first row
        rows = dcluster.classify(None, [str(LOGS), str(CORPUS)], render=jsonl_line, client=client,
                                 on_result=kill_one, progress=False)
        assert killed and killed[0][1] >= 1, "no worker held a task when the first row arrived"
        assert "".join(rows) == local_jsonl
        client.close()
    finally:
        for p in procs:
            p.kill()
            p.wait()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_client(addr):
    from distributed import Client

    deadline = time.time() + 60
    while True:
        try:
            return Client(addr, timeout=5, set_as_default=False)
        except (OSError, TimeoutError):
            if time.time() > deadline:
                raise
            time.sleep(0.5)
