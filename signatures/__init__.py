"""The knowledge base: signature files, their loader and the linear-time matcher.

Ground floor of the project: imports nothing from `diagnose`, `probes` or `tui`.
"""
from signatures.taxonomy import FAMILIES, ORIGINS, ROLES

__all__ = ["FAMILIES", "ORIGINS", "ROLES"]
