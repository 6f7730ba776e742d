"""The inputs of a batch: every argument accounted for, with a row for each one that cannot be read.

Paths are examined with stat (never opened here), so nothing can hang: a FIFO or a device inside a
scanned directory, an unreadable subdirectory, a dangling link or a symlink loop each become a row
that says what it is and what to do, and the rest of the batch goes on.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from diagnose.model import Diagnosis

SKIP_DIRS = {".git", "__pycache__", ".venv", "node_modules", ".diagnose"}
SKIP_NAMES = {"capture.json", "env.json", "manifest.tsv", "manifest.json"}

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def special_kind(mode: int) -> str | None:
    """What a non-regular, non-directory file is ('a FIFO (named pipe)', ...); None for files and dirs."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return None


def os_problem(e: OSError) -> str:
    """An OSError as a reader should see it: what is wrong and what to do."""
    if e.errno == errno.ENOENT:
        return "no such file or directory"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied (check its mode and owner, or run as a user who may read it)"
    if e.errno == errno.ELOOP:
        return "too many levels of symbolic links (a symlink loop)"
    if e.errno == errno.ENOTDIR:
        return "a path component is not a directory"
    return f"cannot read: {e.strerror or e}"


def unreadable(path, problem: str | OSError) -> Diagnosis:
    """The row of an input that could not be read: family unknown, confidence 0, the reason in `error`."""
    if isinstance(problem, OSError):
        problem = os_problem(problem)
    return Diagnosis(path=str(path), family="unknown", confidence=0.0, error=problem,
                     title="input could not be read")


def _stat_problem(path: str, e: OSError) -> str:
    if os.path.islink(path):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        if e.errno == errno.ENOENT:
            return f"dangling symbolic link (its target {target} does not exist)"
    return os_problem(e)


def is_bundle(path) -> bool:
    """A task bundle (from `diagnose run`): a directory holding capture.json. Unreadable: not one."""
    try:
        return os.path.isfile(os.path.join(path, "capture.json"))
    except OSError:
        return False


def collect(paths) -> tuple[list[str], list[Diagnosis]]:
    """(inputs to classify: files, '-', FIFOs given by name, task bundles; rows for the rest).

    A FIFO named as an argument is read like stdin (`diagnose classify <(zcat x.gz)`); inside a
    directory only regular files and bundles are taken. Symlinked directories are followed once
    (a loop back to a directory already scanned is a row)."""
    found: list[str] = []
    rows: list[Diagnosis] = []
    seen: set[tuple[int, int]] = set()
    for raw in paths:
        raw = str(raw)
        if raw == "-":
            found.append("-")
            continue
        try:
            st = os.stat(raw)
        except OSError as e:
            rows.append(unreadable(raw, _stat_problem(raw, e)))
            continue
        if stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            found.append(str(Path(raw)))
        elif stat.S_ISDIR(st.st_mode):
            if is_bundle(raw):
                found.append(str(Path(raw)))
            else:
                _walk(Path(raw), st, found, rows, seen)
        else:
            rows.append(unreadable(raw, f"{special_kind(st.st_mode)}, not a log file: give a regular file"))
    return found, rows


def _walk(top: Path, top_st, found: list[str], rows: list[Diagnosis], seen: set) -> None:
    stack = [(top, top_st)]
    while stack:
        here, st = stack.pop()
        key = (st.st_dev, st.st_ino)
        if key in seen:
            rows.append(unreadable(here, "a directory already scanned (a symlink loop or a second link to it): skipped"))
            continue
        seen.add(key)
        try:
            with os.scandir(here) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            rows.append(unreadable(here, "cannot list this directory: " + os_problem(e)))
            continue
        subdirs = []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            path = here / name
            try:
                est = entry.stat()          # follows symlinks
            except OSError as e:
                rows.append(unreadable(path, _stat_problem(str(path), e)))
                continue
            if stat.S_ISDIR(est.st_mode):
                if name in SKIP_DIRS:
                    continue
                if is_bundle(path):
                    found.append(str(path))
                else:
                    subdirs.append((path, est))
            elif stat.S_ISREG(est.st_mode):
                if name not in SKIP_NAMES:
                    found.append(str(path))
            else:
                rows.append(unreadable(path, f"{special_kind(est.st_mode)} inside a directory: skipped "
                                             "(only regular files are read there; name it as an argument to read a FIFO)"))
        stack.extend(reversed(subdirs))
