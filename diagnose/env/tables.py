"""The version knowledge of `diagnose env`, read from data/*.toml (each file names its sources)."""
from __future__ import annotations

import functools
import tomllib
from pathlib import Path

DATA = Path(__file__).parent / "data"


@functools.cache
def table(name: str) -> dict:
    """data/<name>.toml as a dict (cached: read once per process)."""
    with open(DATA / f"{name}.toml", "rb") as f:
        return tomllib.load(f)
