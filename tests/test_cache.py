"""The cache of derived data (signatures/cache.py): unwritable, poisoned, stale, pruned, never pickle."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from signatures import cache

ROOT = Path(__file__).resolve().parent.parent
LOG = "RuntimeError: CUDA error: out of memory\n"


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("DIAGNOSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    cache.reset()
    yield tmp_path
    cache.reset()


def _classify(env: dict, *paths) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli", "classify", "-f", "jsonl", "-j", "1", *map(str, paths)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), **env))


def test_a_value_is_built_once_per_key_and_again_when_parts_or_code_change(fresh):
    calls = []

    def build():
        calls.append(1)
        return {"n": len(calls)}

    assert cache.cached_json("t", [b"a"], build) == {"n": 1}
    cache.reset()                                   # a new process: read from disk, not rebuilt
    assert cache.cached_json("t", [b"a"], build) == {"n": 1} and len(calls) == 1
    assert cache.cached_json("t", [b"b"], build) == {"n": 2}           # other content
    cache.reset()
    cache._CODE[:] = [b"changed code"]              # the code of signatures/ changed
    try:
        assert cache.cached_json("t", [b"a"], build) == {"n": 3}
    finally:
        cache._CODE.clear()


def test_keys_include_flags_engines_and_cpu():
    a = cache.key_of("single", [b"0", b"pattern"])
    assert a != cache.key_of("single", [b"2", b"pattern"])            # compile flags are a part
    assert a != cache.key_of("single", [b"0pattern"])                 # parts are length-prefixed
    src = Path(cache.__file__).read_text()
    assert "_cpu()" in src and "_engines()" in src


def test_no_pickle_anywhere_in_the_cache_paths():
    import ast

    for rel in ("signatures/cache.py", "signatures/matcher.py", "signatures/loader.py"):
        for node in ast.walk(ast.parse((ROOT / rel).read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) else []
            assert not any(n and n.split(".")[0] in ("pickle", "marshal", "shelve") for n in names), rel


def test_a_planted_file_does_not_run_code(fresh):
    env = {"DIAGNOSE_CACHE_DIR": str(fresh / "cache"), "TMPDIR": str(fresh / "tmp")}
    log = fresh / "a.log"
    log.write_text(LOG)
    clean = _classify(env, log)
    assert clean.returncode == 0, clean.stderr
    names = [p for p in (fresh / "cache").iterdir() if p.name != "key"]
    assert any(p.suffix == ".json" for p in names) and any(p.suffix == ".hsdb" for p in names)
    marker = fresh / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    evil = pickle.dumps(Evil())
    for i, p in enumerate(names):          # every entry replaced: raw pickle, or pickle behind our header
        p.write_bytes(evil if i % 2 else cache.MAGIC + b"\0" * 32 + evil)
    again = _classify(env, log)
    assert again.returncode == 0, again.stderr
    assert not marker.exists()
    assert again.stdout == clean.stdout                # rebuilt, same result
    third = _classify(env, log)                        # and the entries were rewritten, verified
    assert third.stdout == clean.stdout


def test_a_tampered_database_is_rebuilt_not_loaded(fresh):
    hyperscan = pytest.importorskip("hyperscan")

    def build():
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=[b"needle"], ids=[0], elements=1, flags=[0])
        return db

    cache.cached_hyperscan("t", [b"x"], build)
    path = next(p for p in (fresh / "cache").iterdir() if p.suffix == ".hsdb")
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF                                   # one flipped byte in the serialised database
    path.write_bytes(bytes(data))
    cache.reset()
    built = []
    db = cache.cached_hyperscan("t", [b"x"], lambda: built.append(1) or build())
    assert built == [1]
    hits = []
    db.scan(b"a needle", match_event_handler=lambda *a: hits.append(a[0]))
    assert hits == [0]


def test_an_unwritable_cache_dir_warns_once_and_the_next_run_is_cached(fresh):
    env = {"DIAGNOSE_CACHE_DIR": "/dev/null/cache", "TMPDIR": str(fresh / "tmp")}
    log = fresh / "a.log"
    log.write_text(LOG)
    first = _classify(env, log)
    assert first.returncode == 0
    assert first.stderr.count("cache directory /dev/null/cache") == 1
    assert "using" in first.stderr
    private = fresh / "tmp" / f"diagnose-cache-{os.geteuid()}"
    assert any(p.suffix == ".hsdb" for p in private.iterdir())
    assert oct(private.stat().st_mode & 0o777) == "0o700"
    assert _classify(env, log).stdout == first.stdout


def test_no_usable_dir_at_all_still_classifies(fresh):
    env = {"DIAGNOSE_CACHE_DIR": "/dev/null/cache", "TMPDIR": str(fresh / "tmp")}
    (fresh / "tmp" / f"diagnose-cache-{os.geteuid()}").write_text("a file where the fallback dir would go")
    log = fresh / "a.log"
    log.write_text(LOG)
    p = _classify(env, log)
    assert p.returncode == 0 and '"family": "oom"' in p.stdout
    assert "rebuilt in memory" in p.stderr


def test_a_dir_others_can_write_or_a_readable_key_is_refused(fresh, monkeypatch):
    shared = fresh / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("DIAGNOSE_CACHE_DIR", str(shared))
    assert cache._safe_dir(shared) == "writable by other users"
    mine = fresh / "mine"
    assert cache._safe_dir(mine) is None
    (mine / "key").write_bytes(b"k" * 32)
    (mine / "key").chmod(0o644)
    assert cache._load_key(mine) is None


def test_pruning_keeps_the_most_recently_used(fresh):
    d = fresh / "p"
    d.mkdir()
    for i in range(10):
        f = d / f"e{i}.json"
        f.write_bytes(b"x" * 10)
        os.utime(f, (1000 + i, 1000 + i))
    (d / "key").write_bytes(b"k" * 32)
    assert cache.prune(d, max_files=3) == 7
    assert sorted(p.name for p in d.iterdir()) == ["e7.json", "e8.json", "e9.json", "key"]
    assert cache.prune(d, max_files=10, max_bytes=15) == 2


def test_the_loader_no_longer_imports_the_matcher():
    # the on-disk cache was in matcher.py, so loader.py and matcher.py imported each other (issue #20)
    import ast

    tree = ast.parse((ROOT / "signatures" / "loader.py").read_text())
    mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "signatures.matcher" not in mods
