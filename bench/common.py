"""What a benchmark is and what it reports.

Every benchmark takes `quick`: the same code path with few iterations and small inputs. The
tests run each registered benchmark that way (tests/test_bench.py), so one that breaks is
noticed before a figure is asked for; a quick figure is well-formed but not to be read. A
figure's `compared_with` says how it was taken (best of how many rounds, median of what),
in words that match the number.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_OPS = {"<=": operator.le, ">=": operator.ge}


@dataclass(frozen=True)
class Figure:
    name: str
    value: float
    unit: str
    op: str
    limit: float
    compared_with: str
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return bool(_OPS[self.op](self.value, self.limit))

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": round(self.value, 4),
            "unit": self.unit,
            "target": f"{self.op} {self.limit:g}",
            "passed": self.passed,
            "compared_with": self.compared_with,
            "details": self.details,
        }

    def as_line(self) -> str:
        mark = "ok  " if self.passed else "MISS"
        return (
            f"{mark} {self.name:32} {self.value:10.3f} {self.unit:6} "
            f"(target {self.op} {self.limit:g}; {self.compared_with})"
        )


@dataclass(frozen=True)
class Benchmark:
    figures: tuple[str, ...]
    run: Callable[..., list[Figure]]
    """Called as `run(quick=False)` for the figures, `run(quick=True)` for the smoke run."""
