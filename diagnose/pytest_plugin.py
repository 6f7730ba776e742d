"""pytest plugin (entry point `pytest11`): off unless enabled with `-p diagnose` or `diagnose = true` in the ini."""
from __future__ import annotations


def pytest_addoption(parser):
    parser.addini("diagnose", "add a diagnose diagnosis to failing tests' reports", type="bool", default=False)
