"""The env reader: checks of a `diagnose env` snapshot, grouped by section, returning `findings.Finding`.

`run_checks(snapshot)` -> findings, worst first. Each section is a module (probe, driver, gpu, toolkit,
libraries, frameworks, accelerators, envvars = section `env`, host); the version knowledge is in data/*.toml
with its sources; the arch-coverage rule in arch.py; snapshot accessors in snap.py (used by fusion too).
"""
from diagnose.env import (accelerators, driver, envvars, frameworks, gpu, host, libraries, probe,  # noqa: F401
                          toolkit)
from diagnose.env.registry import CHECKS, SECTIONS, Check, run_checks, snapshot_json, worst  # noqa: F401
