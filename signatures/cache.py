"""The on-disk cache of derived data (validated signatures, literal sets, hyperscan databases), in one place.

- Keys: the caller's parts (content, compile flags) plus the code of signatures/, the engine
  versions and the CPU, so a change to any of them is a miss, never a stale hit.
- No pickle: data is JSON, databases are hyperscan's own serialisation; every file carries an
  HMAC-SHA256 under a per-user key (a 0600 file in the cache directory) and is verified before it
  is parsed, so a planted or truncated file is a miss, never code or a wrong database.
- Writes are atomic (a temporary file, then rename); the directory is pruned to the most recently
  used MAX_FILES entries and MAX_BYTES.
- The directory is `$DIAGNOSE_CACHE_DIR`, else `$XDG_CACHE_HOME/diagnose` (~/.cache/diagnose). One
  that cannot be written (or is not safely ours) is replaced, with one warning, by a private
  directory under the system temp dir; failing that, results are kept in memory for this process.
"""
from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import platform
import stat
import sys
import tempfile
from pathlib import Path

MAGIC = b"diagnose-cache/1\n"
MAX_FILES = 4000
MAX_BYTES = 512 << 20

_memory: dict[str, object] = {}      # key -> value, for this process (always; disk is across processes)
_state: dict = {}                    # resolved directory, key, warning given


def _warn(text: str) -> None:
    import multiprocessing

    if multiprocessing.parent_process() is not None:   # a batch worker: the parent has said it
        return
    if not _state.get("warned"):
        _state["warned"] = True
        print(f"diagnose: {text}", file=sys.stderr)


def _configured_dir() -> Path:
    explicit = os.environ.get("DIAGNOSE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "diagnose"


def _safe_dir(path: Path) -> str | None:
    """None when `path` is (or was made) a directory of ours that others cannot write; else why not."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.lstat(path)
    except OSError as e:
        return f"cannot create it ({e.strerror or e})"
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return "owned by another user"
    if st.st_mode & 0o022:
        return "writable by other users"
    if not os.access(path, os.W_OK | os.X_OK):
        return "not writable"
    return None


def _load_key(path: Path) -> bytes | None:
    """The per-user HMAC key: created 0600 once; refused if another user owns it or others can read it."""
    key_path = path / "key"
    try:
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        pass
    except OSError:
        return None
    else:
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(32))
    try:
        fd = os.open(key_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if (hasattr(os, "geteuid") and st.st_uid != os.geteuid()) or st.st_mode & 0o077:
            return None
        key = f.read(64)
    return key if len(key) == 32 else None


def cache_dir() -> tuple[Path, bytes] | None:
    """(directory, HMAC key) to use, or None when only memory is left. Resolved once per process."""
    if "dir" in _state:
        return _state["dir"]
    chosen = None
    wanted = _configured_dir()
    problem = _safe_dir(wanted)
    key = None if problem else _load_key(wanted)
    if problem is None and key is None:
        problem = "its key file is unreadable or not private"
    if problem is None:
        chosen = (wanted, key)
    else:
        uid = os.geteuid() if hasattr(os, "geteuid") else "user"
        fallback = Path(tempfile.gettempdir()) / f"diagnose-cache-{uid}"
        key = None if _safe_dir(fallback) else _load_key(fallback)
        if key is not None:
            chosen = (fallback, key)
            _warn(f"cache directory {wanted}: {problem}; using {fallback} instead "
                  "(set DIAGNOSE_CACHE_DIR to choose one)")
        else:
            _warn(f"cache directory {wanted}: {problem}, and {fallback} cannot be used either: "
                  "derived data is rebuilt in memory on every run (slower start; set DIAGNOSE_CACHE_DIR)")
    _state["dir"] = chosen
    return chosen


def reset() -> None:
    """Forget the resolved directory and the in-memory entries (tests; a changed environment)."""
    _state.clear()
    _memory.clear()


_CODE: list[bytes] = []


def code_digest() -> bytes:
    """Changes whenever any code of signatures/ (which derives every cached value) changes."""
    if not _CODE:
        h = hashlib.sha256()
        for path in sorted(Path(__file__).parent.glob("*.py")):
            h.update(path.name.encode() + b"\0" + path.read_bytes())
        _CODE.append(h.hexdigest().encode())
    return _CODE[0]


@functools.lru_cache(maxsize=None)
def _cpu() -> bytes:
    """The CPU a hyperscan database was compiled for: architecture and feature flags."""
    flags = ""
    try:
        with open("/proc/cpuinfo", "rb") as f:
            for line in f.read(1 << 16).splitlines():
                if line.startswith((b"flags", b"Features")):
                    flags = line.split(b":", 1)[-1].decode("ascii", "replace").strip()
                    break
    except OSError:
        pass
    return f"{platform.machine()}|{flags}".encode()


@functools.lru_cache(maxsize=None)
def _engines() -> bytes:
    out = []
    for name in ("hyperscan", "re2"):
        try:
            from importlib.metadata import version

            out.append(f"{name}={version('google-re2' if name == 're2' else name)}")
        except Exception:
            out.append(f"{name}=?")
    return ";".join(out).encode()


def key_of(kind: str, parts: list[bytes]) -> str:
    h = hashlib.sha256()
    for part in [kind.encode(), code_digest(), _engines(), _cpu(), sys.version.encode()] + list(parts):
        h.update(len(part).to_bytes(8, "little") + part)     # length-prefixed: no two part lists collide
    return f"{kind}-{h.hexdigest()[:40]}"


def _read(name: str) -> bytes | None:
    where = cache_dir()
    if where is None:
        return None
    path, key = where
    try:
        fd = os.open(path / name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        data = f.read(MAX_BYTES + 1)
    head = len(MAGIC) + 32
    if len(data) < head or not data.startswith(MAGIC):
        return None
    payload = data[head:]
    if not hmac.compare_digest(data[len(MAGIC):head], hmac.new(key, name.encode() + b"\0" + payload, "sha256").digest()):
        return None                  # planted, truncated or from another key: a miss
    try:
        os.utime(path / name)        # last used: what pruning keeps
    except OSError:
        pass
    return payload


def _write(name: str, payload: bytes) -> None:
    where = cache_dir()
    if where is None:
        return
    path, key = where
    sig = hmac.new(key, name.encode() + b"\0" + payload, "sha256").digest()
    try:
        fd, tmp = tempfile.mkstemp(dir=path, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + sig + payload)
        os.replace(tmp, path / name)
    except OSError:
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass
        return
    prune(path)


def prune(path: Path, max_files: int = MAX_FILES, max_bytes: int = MAX_BYTES) -> int:
    """Delete the least recently used entries beyond max_files / max_bytes; the number deleted."""
    try:
        entries = []
        with os.scandir(path) as it:
            for e in it:
                if e.name == "key" or not e.is_file(follow_symlinks=False):
                    continue
                st = e.stat(follow_symlinks=False)
                entries.append((st.st_mtime, st.st_size, e.name))
    except OSError:
        return 0
    total = sum(size for _, size, _ in entries)
    if len(entries) <= max_files and total <= max_bytes:
        return 0
    entries.sort(reverse=True)                    # newest first
    kept, deleted, size = 0, 0, 0
    for mtime, sz, name in entries:
        if kept < max_files and size + sz <= max_bytes:
            kept += 1
            size += sz
            continue
        try:
            os.unlink(path / name)
            deleted += 1
        except OSError:
            pass
    return deleted


def cached_json(kind: str, parts: list[bytes], build):
    """build() (a JSON value) once per key: from memory, else from a verified file, else built and stored."""
    name = key_of(kind, parts) + ".json"
    if name in _memory:
        return _memory[name]
    payload = _read(name)
    value = None
    if payload is not None:
        try:
            value = json.loads(payload)
        except ValueError:
            value = None
    if value is None:
        value = build()
        _write(name, json.dumps(value, separators=(",", ":")).encode())
    _memory[name] = value
    return value


def cached_hyperscan(kind: str, parts: list[bytes], build):
    """A hyperscan block-mode database (with its scratch) once per key, from a verified file or built."""
    import hyperscan

    name = key_of(kind, parts) + ".hsdb"      # not kept in _memory: the matcher bounds what it holds
    payload = _read(name)
    db = None
    if payload is not None:
        try:
            db = hyperscan.loadb(payload, hyperscan.HS_MODE_BLOCK)
        except Exception:
            db = None
    if db is None:
        db = build()
        try:
            _write(name, hyperscan.dumpb(db))
        except Exception:
            pass
    db.scratch = hyperscan.Scratch(db)
    return db
