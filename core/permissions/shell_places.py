"""Where each part of a shell command runs, so its relative paths are judged from there.

A shell keeps its directory between calls, and `cd` inside a command moves it for the parts
after it: `cd sub && cat x` reads `sub/x`. Which directory a part runs in depends on whether
each `cd` before it succeeded, so a part is given every directory it may run in:

- in a flat list (`a && b; c`, nothing else between the parts), walking the list in order:
  after `cd X &&` the next part runs in X (or not at all); after a `;` or a newline, in any
  directory the `&&` run before it may have stopped in (a `cd` that fails does not move);
- in any other command (pipelines, subshells, conditionals) a `cd` may or may not have
  happened before each later part, so a part runs where the shell started or anywhere a
  `cd` before it may lead;
- with a loop or a function, the order in the text is not the order of running (a loop
  runs its `cd` before its next `ls`), so every part is given every directory any `cd` may
  lead to, applied until nothing new is reached.

A `cd` is followed in both the shell's reading of its operand (`..` folded as text, as
`cd -L` does) and the kernel's (`..` after a symlink leads out of it). What cannot be
followed (`cd -`, `cd $DIR`, `pushd`, a relative `cd` while CDPATH is set) is a problem the
chain reports by asking.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..access.paths import resolved
from ..bash import BashAnalysis, SimpleCommand, unwrap

_MAX_PLACES = 16
_MOVES = re.compile(r"\s*(?:builtin\s+|command\s+)?(?:cd|pushd|popd)\b")
_FLAT_GAPS = frozenset({"&&", ";", ""})  # "" is a newline
# What lets a part run again after a later `cd`: a loop, or a function called later.
_LOOPS = re.compile(r"\b(?:for|while|until|select|function)\b|\(\s*\)")


@dataclass(frozen=True, slots=True)
class ShellPlaces:
    parts: tuple[tuple[Path, ...], ...]
    """Per part of the analysis, the directories it may run in."""
    problem: str = ""
    """Why where some part runs cannot be told; "" when it can."""

    def of(self, index: int, fallback: Path) -> tuple[Path, ...]:
        return self.parts[index] if index < len(self.parts) else (fallback,)

    def every(self) -> tuple[Path, ...]:
        return tuple(dict.fromkeys(place for part in self.parts for place in part))


def shell_places(analysis: BashAnalysis, start: Path) -> ShellPlaces:
    commands = analysis.commands
    moves: list[str | None] = []  # per part: the `cd` operand, or None when it does not move
    for command in commands:
        target, problem = _cd_target(command)
        if problem:
            return ShellPlaces(tuple((start,) for _ in commands), problem)
        moves.append(target)
    if not any(target is not None for target in moves):
        return ShellPlaces(tuple((start,) for _ in commands))
    gaps = _gaps(analysis)
    if gaps is not None:
        return _in_order(moves, gaps, start)
    if _LOOPS.search(analysis.command):
        return _everywhere(moves, start, len(commands))
    return _in_any_order(moves, start)


def _cd_target(command: SimpleCommand) -> tuple[str | None, str]:
    argv = unwrap(command.argv) if command.argv else ()
    if argv[:1] not in (("cd",), ("pushd",), ("popd",)):
        if command.argv is None and _MOVES.match(command.text):
            return None, f"`{command.text}` goes where this check cannot follow"
        return None, ""
    cannot = f"`{command.text}` goes where this check cannot follow"
    if command.wild or argv[0] != "cd":
        return None, cannot
    operands = [word for word in argv[1:] if not word.startswith("-") or word == "-"]
    if "-" in operands or len(operands) > 1:
        return None, cannot
    target = os.path.expanduser(operands[0] if operands else "~")
    relative = not target.startswith(("/", "./", "../")) and target not in (".", "..")
    if relative and os.environ.get("CDPATH"):
        return None, f"CDPATH is set, so `{command.text}` may go to another directory"
    return target, ""


def _gaps(analysis: BashAnalysis) -> list[str] | None:
    """What joins each part to the one before it (`&&`, `;`, "" for a newline), when the
    command is a plain list of simple commands; None when it is anything else."""
    text, position = analysis.command, 0
    gaps: list[str] = []
    for index, command in enumerate(analysis.commands):
        found = text.find(command.text, position) if command.text else -1
        if found < 0:
            return None
        gap = text[position:found].strip()
        if (index == 0 and gap) or gap not in _FLAT_GAPS:
            return None
        gaps.append(gap)
        position = found + len(command.text)
    return gaps if text[position:].strip() in ("", ";") else None


def _moved(places: list[Path], target: str) -> list[Path]:
    reached: list[Path] = []
    for place in places:
        joined = os.path.join(place, target)
        for form in (Path(os.path.normpath(joined)), resolved(Path(joined))):
            if form not in reached:
                reached.append(form)
    return reached


def _in_order(moves: list[str | None], gaps: list[str], start: Path) -> ShellPlaces:
    here = [start]
    # Where the shell may be when the current `&&` run stops: it stops at the first part
    # that fails, and a `cd` that fails leaves the shell where it was.
    stopped = [start]
    parts: list[tuple[Path, ...]] = []
    after: list[Path] | None = None
    for target, gap in zip(moves, gaps, strict=True):
        if gap == "&&":
            if after is not None:
                here = after  # after `cd X &&`, the next part runs only if the cd worked
        elif parts:
            # After `;` or a newline a part runs however the run before it ended:
            # `cd sub && true; cat ../x` reads ../x from the start when sub is missing.
            here = _union(stopped, after if after is not None else here)
            stopped = []
        stopped = _union(stopped, here)
        parts.append(tuple(here))
        after = None if target is None else _moved(here, target)
        if after is not None and len(after) + len(stopped) > _MAX_PLACES:
            return ShellPlaces(tuple(parts), _TOO_MANY)
    return ShellPlaces(tuple(parts))


_TOO_MANY = "the command changes directory more often than can be followed"


def _union(first: list[Path], second: list[Path]) -> list[Path]:
    return first + [place for place in second if place not in first]


def _in_any_order(moves: list[str | None], start: Path) -> ShellPlaces:
    """No part runs twice, but a `cd` may or may not have happened before any later part
    (it may sit in a subshell, a condition, a pipeline)."""
    here = [start]
    parts: list[tuple[Path, ...]] = []
    for target in moves:
        parts.append(tuple(here))
        if target is not None:
            here = _union(here, _moved(here, target))
            if len(here) > _MAX_PLACES:
                return ShellPlaces(tuple(parts), _TOO_MANY)
    return ShellPlaces(tuple(parts))


def _everywhere(moves: list[str | None], start: Path, count: int) -> ShellPlaces:
    known = [start]
    targets = [target for target in moves if target is not None]
    while True:
        grown = known
        for target in targets:
            grown = _union(grown, _moved(grown, target))
        if len(grown) > _MAX_PLACES:
            return ShellPlaces(tuple((start,) for _ in range(count)), _TOO_MANY)
        if len(grown) == len(known):
            return ShellPlaces(tuple(tuple(known) for _ in range(count)))
        known = grown
