"""What a bad settings file is reported as, and where in the file the problem is.

A `SettingsProblem` names the file, line and column, so a user can go straight to it. Finding
the line and column is only ever on the error path: `load_settings` parses each file with plain
`json.loads` and keeps no positions, so `locate` re-scans the text of the one file that has a
problem, following the same JSON path the parser walked (`("permissions", "allow", 2)`).

`kind_of` and `dotted` name a value and a path the way every message here does, for the reader
and the writer alike.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

JsonPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class SettingsProblem:
    path: Path | None
    """None for CLI flags."""
    line: int | None
    column: int | None
    message: str

    def __str__(self) -> str:
        if self.path is None:
            return f"command line: {self.message}"
        where = str(self.path)
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"


_SPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity")


def locate(text: str, at: JsonPath) -> int | None:
    """Offset of the key (for an object member) or the element at `at`; None if lost."""
    try:
        return _locate_in(text, at)
    except (IndexError, ValueError):
        return None


def _locate_in(text: str, at: JsonPath) -> int | None:
    pos = _skip_space(text, 0)
    found = pos
    for step in at:
        opener, closer = ("{", "}") if isinstance(step, str) else ("[", "]")
        if text[pos] != opener:
            return None
        pos = _skip_space(text, pos + 1)
        target: tuple[int, int] | None = None
        index = 0
        while text[pos] != closer:
            member_at = pos
            if isinstance(step, str):
                key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
                pos = _skip_space(text, _skip_space(text, pos) + 1)  # past the ':'
                if key == step:
                    target = (member_at, pos)  # json.loads keeps the last duplicate too
            elif index == step:
                target = (member_at, pos)
                break
            pos = _skip_space(text, _skip_value(text, pos))
            if text[pos] == ",":
                pos = _skip_space(text, pos + 1)
            index += 1
        if target is None:
            return None
        found, pos = target
    return found


def _skip_space(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


def _skip_value(text: str, pos: int) -> int:
    char = text[pos]
    if char == '"':
        end: int = json.decoder.scanstring(text, pos + 1)[1]  # type: ignore[attr-defined]
        return end
    if char in "{[":
        closer = "}" if char == "{" else "]"
        pos = _skip_space(text, pos + 1)
        while text[pos] != closer:
            pos = _skip_space(text, _skip_value(text, pos))
            if text[pos] in ",:":
                pos = _skip_space(text, pos + 1)
        return pos + 1
    match = _SCALAR.match(text, pos)
    if match is None:
        raise ValueError(f"unexpected {char!r} at {pos}")
    return match.end()


def line_column(text: str, offset: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def dotted(at: JsonPath) -> str:
    out = ""
    for step in at:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"a string ({value!r})" if len(value) < 40 else "a string"
    if isinstance(value, int | float):
        return f"a number ({value})"
    return "a list" if isinstance(value, list) else "an object"
