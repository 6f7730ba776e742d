"""The ground floor's one result shape: a `Finding`, what every reader (env checks, numerics, lint,
timing, profile, the log matcher's diagnosis) says about a task. It imports nothing of the project.

Reports, the store, the review and the TUI render findings one way (`Finding.to_json()`;
`findings.render`). The JSON field names are a public contract: see docs/output.md.
"""
from findings.model import ORIGINS, SEVERITIES, Evidence, Finding, severity_rank, sort_findings

__all__ = ["Evidence", "Finding", "ORIGINS", "SEVERITIES", "severity_rank", "sort_findings"]
