"""A tiny getopt: flag tables written as readable strings, and the scan that applies them.

Tables are allow-lists. A flag missing from a table is *unknown*, and an unknown flag stops
the scan: we cannot know whether it takes an argument, so nothing after it can be read
with confidence and the command is not read-only. That also defeats GNU's abbreviated
long options (`sort --out=x` is `--output`): an abbreviation is simply not in the table.

Each table entry says how its argument is taken, in the spelling of the table strings:

    -n        no argument            --quiet     no argument
    -n:       a value (next word or attached: `-n5`, `-n 5`, `--lines=5`, `--lines 5`)
    -f/       a path, taken the same way (reported by touched_paths)
    --color?  an optional value, only ever attached (`--color`, `--color=auto`)

A value flag swallows the next word, so a flag is marked `:` or `/` only when the program
really does that; when in doubt it is `?`, and a separate next word is then scanned as a
flag or operand of its own, which can only make the result stricter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Arg(Enum):
    NONE = ""
    VALUE = ":"
    PATH = "/"
    ATTACHED = "?"


@dataclass(frozen=True, slots=True)
class Flag:
    arg: Arg
    unsafe: str = ""  # why the flag can write files or run programs; "" when harmless
    writes: bool = False
    """Its value names a file the program writes (`sort -o FILE`): judged as a write, like a
    redirection's target, even when a person's prefix rule allows the program."""


WRITES_FILE = "writes-file"
"""The third item of an unsafe group whose flags name a file the program writes:
`("-o/ --output=/", "writes the sorted result to a file", WRITES_FILE)`."""


@dataclass(frozen=True, slots=True)
class Spec:
    """How one command reads its arguments, and which operands are paths."""

    flags: Mapping[str, Flag]
    numeric: bool = False  # `-20` means a count (head, tail, git log)
    max_operands: int | None = None  # a further operand is an output file or a setting
    pattern_first: frozenset[str] = frozenset()  # first operand is a pattern unless one of these
    operands_are_paths: bool = True
    stop_at_operand: bool = False  # POSIX-style: options end at the first operand
    single_dash_words: bool = False  # xxd-style `-cols 8`: no clusters, whole words only
    check: str = ""  # name of a special check in readonly.py


_SUFFIXES = {"=/": Arg.PATH, "=": Arg.VALUE, ":": Arg.VALUE, "/": Arg.PATH, "?": Arg.ATTACHED}


def table(text: str, *unsafe: tuple[str, ...]) -> dict[str, Flag]:
    """Build a flag table from the mini-syntax; `unsafe` pairs flags with why they are unsafe
    (and, third, `WRITES_FILE` when their value is a file the program writes)."""
    flags: dict[str, Flag] = {}
    for group, why, *marks in ((text, ""), *unsafe):
        writes = WRITES_FILE in marks
        for token in group.split():
            name, arg = token, Arg.NONE
            for suffix in ("=/", "=", ":", "/", "?"):
                if token.endswith(suffix) and len(token) > len(suffix) + 1:
                    name = token[: -len(suffix)]
                    arg = _SUFFIXES[suffix]
                    break
            flags[name] = Flag(arg, why, writes)
    return flags


def spec(text: str, *unsafe: tuple[str, ...], **options: Any) -> Spec:
    return Spec(table(text, *unsafe), **options)


@dataclass(slots=True)
class Scan:
    options: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # flag values that name files
    unknown: str = ""  # the first flag not in the table; the scan stopped there
    unsafe: tuple[str, str] | None = None  # the first unsafe flag and why
    written: list[str | None] = field(default_factory=list)
    """Values of flags that name a file the program writes; None where such a flag's file
    is not named (an optional value left out: the program's default file)."""
    rest: list[str] = field(default_factory=list)  # words after the first operand (stop mode)

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)


def _take(scan: Scan, name: str, flag: Flag, value: str | None) -> None:
    scan.options.append((name, value))
    if flag.arg is Arg.PATH and value is not None:
        scan.paths.append(value)
    if flag.unsafe and scan.unsafe is None:
        scan.unsafe = (name, flag.unsafe)
    if flag.writes:
        scan.written.append(value)


def scan(args: Sequence[str], spec: Spec) -> Scan:
    result = Scan()
    flags = spec.flags
    i = 0
    count = len(args)
    while i < count:
        word = args[i]
        i += 1
        if word == "--":
            result.operands.extend(args[i:])
            break
        if len(word) < 2 or word[0] != "-":
            if spec.stop_at_operand:
                result.operands.append(word)
                result.rest = list(args[i:])
                break
            result.operands.append(word)
            continue
        if spec.numeric and word[1:].isdigit():
            result.options.append((word, None))
            continue
        if word.startswith("--"):
            name, eq, attached = word.partition("=")
            flag = flags.get(name)
            if flag is None or (eq and flag.arg is Arg.NONE):
                result.unknown = word
                return result
            value: str | None = attached if eq else None
            if not eq and flag.arg in (Arg.VALUE, Arg.PATH) and i < count:
                value = args[i]
                i += 1
            _take(result, name, flag, value)
            continue
        if spec.single_dash_words:
            flag = flags.get(word)
            value = None
            if flag is None and word[:2] in flags and flags[word[:2]].arg is not Arg.NONE:
                flag, value = flags[word[:2]], word[2:]
                word = word[:2]
            if flag is None:
                result.unknown = word
                return result
            if value is None and flag.arg in (Arg.VALUE, Arg.PATH) and i < count:
                value = args[i]
                i += 1
            _take(result, word, flag, value)
            continue
        # A cluster of short flags: `-la`, `-n5`, `-C path`.
        j = 1
        while j < len(word):
            name = "-" + word[j]
            flag = flags.get(name)
            if flag is None:
                result.unknown = word if len(word) == 2 else f"{name} (in `{word}`)"
                return result
            j += 1
            if flag.arg is Arg.NONE:
                _take(result, name, flag, None)
                continue
            if j < len(word):
                value = word[j:]
            elif flag.arg is not Arg.ATTACHED and i < count:
                value = args[i]
                i += 1
            else:
                value = None
            _take(result, name, flag, value)
            break
    return result
