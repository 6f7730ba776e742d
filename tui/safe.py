"""Untrusted text made safe to display: control characters shown as text, never parsed as markup."""
from __future__ import annotations

from rich.text import Text

from signatures.normalise import visible


def clean(s: object) -> str:
    """A single display line: control characters (ESC, BEL, CR, C1) made visible, tabs and newlines spaced."""
    return visible(str(s)).replace("\t", "    ").replace("\n", " ")


def safe(s: object, style: str = "") -> Text:
    """A rich Text of untrusted text: Text is never parsed as markup, and `clean` removes escapes."""
    return Text(clean(s), style=style, end="")


def safe_block(s: object, style: str = "") -> Text:
    """Like `safe` but keeps newlines (for multi-line notes and explanations)."""
    return Text("\n".join(clean(line) for line in str(s).split("\n")), style=style, end="")
