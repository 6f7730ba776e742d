"""The plain data every profile format is read into: kernels with canonical metrics, a timeline."""
from __future__ import annotations

from dataclasses import dataclass, field


class ProfileError(ValueError):
    """An export that cannot be read; the message names the file and what is missing."""


@dataclass
class Kernel:
    name: str
    file: str
    line: int | None = None            # the row (1-based) of the export where the kernel starts
    tool: str = ""                     # ncu | nsys | torch | jax
    device: str | None = None
    metrics: dict = field(default_factory=dict)   # canonical name -> float (see ncu.CANONICAL)
    stalls: dict = field(default_factory=dict)    # stall reason -> share or cycles per issue
    rules: list = field(default_factory=list)     # {"name", "type", "message", "speedup"}
    launches: int = 1

    def m(self, key: str):
        return self.metrics.get(key)


@dataclass
class Span:
    kind: str           # kernel | memcpy-htod | memcpy-dtoh | memcpy-dtod | memset | sync | api
    name: str
    start_ns: float
    end_ns: float
    bytes: float | None = None

    @property
    def dur_ns(self) -> float:
        return max(0.0, self.end_ns - self.start_ns)


@dataclass
class Profile:
    file: str
    tool: str
    kernels: list[Kernel] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)        # a timeline, when the export has one
    summary_only: bool = False                               # per-name totals (nsys stats), no spans
    notes: list[str] = field(default_factory=list)
