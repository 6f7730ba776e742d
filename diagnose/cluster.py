"""Batch classification past one machine: the batch's task groups run on a Dask distributed cluster.

`classify(address, paths, ...)` sends the same task groups as the local batch (diagnose/batch.py:
largest files first, about TASK_BYTES or TASK_FILES each) to the scheduler at `address`, and returns
the same rows in the same order (sorted by path) as a local run. Workers either read the files by
path (a filesystem shared by every worker, mounted at the same path) or, with `send_bytes`, receive
each file's bytes from this process and classify a private copy (no shared filesystem needed).

A worker lost mid-batch loses no row: the scheduler reschedules its tasks on the others (each task
is pure and may run twice; `retries` adds attempts for tasks that raise). Progress comes from the
cluster: a row is counted when its task's result arrives. stdin (`-`), FIFOs and devices cannot
travel: they are read here.

Needs the optional extra `cluster` (dask + distributed); every worker needs this package installed
at the same version (docs/cluster.md).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from diagnose.model import Diagnosis

RETRIES = 3          # attempts beyond the first for a task that raises (a lost worker is rescheduled anyway)
SEND_LIMIT = 256 << 20   # a file bigger than this is never sent as bytes: classified here instead


class ClusterError(Exception):
    """The scheduler cannot be reached or used (the CLI turns it into a usage error)."""


def _extra_signatures(dirs) -> dict[str, str]:
    """The extra signature files' texts, so workers need no access to them."""
    from signatures.loader import signature_files

    shipped = set(signature_files())
    return {f"{i:03d}-{p.name}": p.read_text(encoding="utf-8")
            for i, p in enumerate(f for f in signature_files(tuple(dirs)) if f not in shipped)}


_MATCHERS: dict[str, object] = {}


def _matcher(extra: dict[str, str]):
    """On a worker: the default matcher, or one with the extra signatures (built once per content)."""
    from signatures.matcher import default_matcher

    if not extra:
        return default_matcher()
    key = hashlib.sha256(repr(sorted(extra.items())).encode()).hexdigest()[:16]
    m = _MATCHERS.get(key)
    if m is None:
        d = Path(tempfile.gettempdir()) / f"diagnose-sigs-{key}"
        d.mkdir(exist_ok=True)
        for name, text in extra.items():
            (d / name).write_text(text, encoding="utf-8")
        m = _MATCHERS[key] = default_matcher((str(d),))
    return m


def _classify_group(paths: list[str], snapshot, render, extra) -> list:
    """One task, on a worker: the rows of `paths` (rendered when `render` is given)."""
    from diagnose.engine import diagnose_file, diagnose_files

    matcher = _matcher(extra)
    try:
        out = diagnose_files(paths, snapshot, matcher)
    except Exception:                 # one bad input must not sink its group
        out = []
        for p in paths:
            try:
                out.append(diagnose_file(p, snapshot, matcher))
            except Exception as e:
                out.append(Diagnosis(path=p, family="unknown", error=f"internal error: {type(e).__name__}: {e}"))
    return [(d.path, render(d) if render else d) for d in out]


def _classify_sent(items: list[tuple[str, dict[str, bytes]]], snapshot, render, extra) -> list:
    """One task, on a worker, in bytes mode: each item is (original path, {name: bytes}) for a file
    (one entry, its own name) or a task bundle (its files). The copy is classified where it lies and
    the row given back the original path, so the row is the one a local run would write."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="diagnose-sent-") as tmp:
        local: dict[str, str] = {}
        for i, (path, files) in enumerate(items):
            where = Path(tmp) / str(i)
            where.mkdir()
            for name, data in files.items():
                (where / name).write_bytes(data)
            local[str(where / Path(path).name) if len(files) == 1 and Path(path).name in files
                  else str(where)] = path
        for tmp_path, (_, value) in zip(local, _classify_group(list(local), snapshot, None, extra)):
            value.path = local[tmp_path]
            rows.append((value.path, render(value) if render else value))
    return rows


def _payload(path: str) -> dict[str, bytes] | None:
    """The bytes a worker needs for `path`: the file, or a task bundle's files; None when too big or unreadable."""
    p = Path(path)
    try:
        if p.is_dir():
            files = [f for f in p.iterdir() if f.is_file()]
            if sum(f.stat().st_size for f in files) > SEND_LIMIT:
                return None
            return {f.name: f.read_bytes() for f in files}
        if not p.is_file() or p.stat().st_size > SEND_LIMIT:
            return None
        return {p.name: p.read_bytes()}
    except OSError:
        return None


def connect(address: str, timeout: float = 10):
    try:
        from distributed import Client
    except ImportError as e:
        raise ClusterError("--cluster needs dask and distributed: pip install 'gpu-diagnose[cluster]'") from e
    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {e}; start one with "
                           "`dask scheduler` and workers with `dask worker ADDRESS` (docs/cluster.md)") from e


def classify(address, paths, snapshot: dict | None = None, render=None, send_bytes: bool = False,
             extra_signatures=(), progress: bool | None = None, on_result=None, client=None,
             timeout: float = 10) -> list:
    """batch.classify on a cluster: the same rows, in the same order.

    `address` is the scheduler's (tcp://HOST:PORT), or pass a connected `client`."""
    import sys

    from diagnose import batch

    files, results = batch.collect(paths)
    if render is not None:
        results = [(d.path, render(d)) for d in results]
    else:
        results = [(d.path, d) for d in results]
    sizes = {f: batch._size(f) for f in files}
    files.sort(key=sizes.__getitem__, reverse=True)
    # stdin, FIFOs and devices cannot travel (and a worker elsewhere would see another one): read here
    here = [f for f in files if f == "-" or not (os.path.isfile(f) or os.path.isdir(f))]
    files = [f for f in files if f not in set(here)]
    extra = _extra_signatures(extra_signatures)
    own = client is None
    client = client or connect(address, timeout)
    if progress is None:
        progress = sys.stderr.isatty() and len(files) > 20
    bar = batch._progress(len(files) + len(here)) if progress else None
    try:
        futures = []
        for group in batch._groups(files, sizes):
            if send_bytes:
                items, local = [], []
                for p in group:
                    data = _payload(p)
                    (local if data is None else items).append(p if data is None else (p, data))
                if items:
                    futures.append(client.submit(_classify_sent, items, snapshot, render, extra,
                                                 retries=RETRIES, pure=False))
                here += local        # too big to send, or unreadable: classified (or reported) here
            else:
                futures.append(client.submit(_classify_group, group, snapshot, render, extra,
                                             retries=RETRIES, pure=False))
        from distributed import as_completed

        for fut in as_completed(futures, loop=client.loop):
            rows = fut.result()
            fut.release()
            for row in rows:
                results.append(row)
                if on_result:
                    on_result(row)
                if bar:
                    bar[0].advance(bar[1])
        if here:
            for row in _classify_group(here, snapshot, render, extra):
                results.append(row)
                if on_result:
                    on_result(row)
                if bar:
                    bar[0].advance(bar[1])
    finally:
        if bar:
            bar[0].stop()
        if own:
            client.close()
    results.sort(key=lambda item: item[0])
    return [value for _, value in results]


def scheduler_address(text: str) -> str:
    """tcp://HOST:PORT, or HOST:PORT (tcp assumed)."""
    return text if "://" in text else f"tcp://{text}"

