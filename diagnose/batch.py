"""Batch classification: expand paths, classify in parallel, return results sorted by path."""
from __future__ import annotations

import os
import sys

from diagnose.engine import diagnose_file, diagnose_files
# Inputs (files, FIFOs, bundles, and a row for each one that cannot be read) are collected in one place.
from diagnose.inputs import SKIP_DIRS, SKIP_NAMES, collect  # noqa: F401  (re-exported)
from diagnose.model import Diagnosis


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size if path != "-" else 0
    except OSError:
        return 0


_SNAPSHOT: dict | None = None


def _work(path: str) -> Diagnosis:
    try:
        return diagnose_file(path, _SNAPSHOT)
    except Exception as e:   # a bug must not sink the batch: the row says what happened
        return Diagnosis(path=path, family="unknown", error=f"internal error: {type(e).__name__}: {e}")


TASK_BYTES = 8 << 20
TASK_FILES = 64


def _groups(files: list[str], sizes: dict[str, int]):
    """Files (largest first) in groups of about TASK_BYTES or TASK_FILES: big files travel alone,
    small ones together, so no worker is handed most of the bytes at once."""
    group, size = [], 0
    for f in files:
        group.append(f)
        size += sizes[f]
        if size >= TASK_BYTES or len(group) >= TASK_FILES:
            yield group
            group, size = [], 0
    if group:
        yield group


_RENDER = None


def _work_group(paths: list[str]) -> list:
    try:
        out = diagnose_files(paths, _SNAPSHOT)
    except Exception:            # one bad input must not sink its group: fall back to one at a time
        out = [_work(p) for p in paths]
    return out if _RENDER is None else [(d.path, _RENDER(d)) for d in out]


def _init_worker(snapshot: dict | None, render, signature_dirs: tuple[str, ...]) -> None:
    """A worker's configuration, handed over by the pool (not inherited), so `spawn` works as `fork` does."""
    global _SNAPSHOT, _RENDER
    _SNAPSHOT, _RENDER = snapshot, render
    if signature_dirs:
        import signatures.matcher as m

        m._default = m.default_matcher(tuple(signature_dirs))


def start_method() -> str:
    """fork where the OS has it (the matcher's databases are shared, not rebuilt); DIAGNOSE_START_METHOD
    (spawn, forkserver) overrides it."""
    import multiprocessing as mp

    wanted = os.environ.get("DIAGNOSE_START_METHOD")
    if wanted:
        if wanted not in mp.get_all_start_methods():
            raise ValueError(f"DIAGNOSE_START_METHOD={wanted!r}: one of {', '.join(mp.get_all_start_methods())}")
        return wanted
    return "fork" if "fork" in mp.get_all_start_methods() else mp.get_start_method()


def classify(paths, jobs: int | None = None, snapshot: dict | None = None, progress: bool | None = None,
             on_result=None, render=None, signature_dirs=()) -> list:
    """Diagnose every input; the result is sorted by path whatever `jobs` is.

    With `render` (a function of a Diagnosis, e.g. to one JSON line) the workers render in parallel
    and the result is the rendered values, in path order; `on_result` then sees (path, value).
    `signature_dirs` are extra signature files or directories; workers get them (with `snapshot`
    and `render`) through the pool's initializer.
    """
    global _SNAPSHOT, _RENDER
    from signatures.matcher import default_matcher

    files, results = collect(paths)
    if render is not None:
        results = [(d.path, render(d)) for d in results]
    config = (snapshot, render, tuple(str(d) for d in signature_dirs))
    _init_worker(*config)      # this process too: it classifies small batches itself
    default_matcher()          # build (or load) the database once, before workers fork
    jobs = jobs or os.cpu_count() or 1
    sizes = {f: _size(f) for f in files}
    files.sort(key=sizes.__getitem__, reverse=True)      # largest first keeps the workers busy to the end
    if progress is None:
        progress = sys.stderr.isatty() and len(files) > 20
    bar = None
    try:
        if jobs <= 1 or len(files) < 4 or "-" in files:
            it = (d for group in map(_work_group, _groups(files, sizes)) for d in group)
            pool = None
        else:
            import multiprocessing as mp

            pool = mp.get_context(start_method()).Pool(min(jobs, len(files)), initializer=_init_worker,
                                                       initargs=config)
            it = (d for group in pool.imap_unordered(_work_group, _groups(files, sizes), chunksize=1) for d in group)
        bar = _progress(len(files)) if progress else None     # its thread starts after the workers fork
        for d in it:
            results.append(d)
            if on_result:
                on_result(d)
            if bar:
                bar[0].advance(bar[1])
        if pool:
            pool.close()
            pool.join()
    finally:
        if bar:
            bar[0].stop()
        _RENDER = None
    if render is not None:
        results.sort(key=lambda item: item[0])
        return [value for _, value in results]
    results.sort(key=lambda d: d.path)
    return results


def _progress(total: int):
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    p = Progress("classifying", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                 console=Console(stderr=True), transient=True)
    task = p.add_task("classify", total=total)
    p.start()
    return p, task
