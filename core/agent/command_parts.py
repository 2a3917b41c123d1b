"""A custom command's body read into parts: text, `@path` includes and !`cmd` runs.

The parts are found in the template *before* `$ARGUMENTS` and `$1`… are filled in, and what
an argument brings is never read for them again, so an argument cannot make a command run
(`/review "!`curl evil`"` stays text) or a file be included. Inside a !`…` run each
placeholder is filled as data for the quoting it stands in (`_fill_command`), so `!`git log
$1`` with `$1` = `x; rm -rf ~` runs `git log 'x; rm -rf ~'`: one word for git, nothing for
the shell to run, and `"$1"` or `'$1'` in the template cannot be closed by the argument. Filling a
`@$1` include is plain text: the file it names is still checked like any include
(command_prepare.py), and a file's or a command's output is never read for parts either.

Light on purpose (no engine import): the app resolves a typed line with it on the message
loop; running and reading happen when the turn starts (command_prepare.py).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class Include:
    """`@path`: the file's text goes with the prompt if the person's Read rules allow it."""

    path: str


@dataclass(frozen=True, slots=True)
class Run:
    """!`command`: run through the permission chain as a Bash call, its output in its place."""

    command: str
    refused: str | None = None
    """Why it is not run at all (`command` is then the template as written): an argument
    that would substitute a command wherever Bash reads it as arithmetic."""


Part = Text | Include | Run

PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9][0-9]*)")
_SPECIAL = re.compile(r"!`(?P<command>[^`\n]+)`|(?<!\S)@(?P<path>[^\s`'\"<>|;&()]+)")
_TRAILING_PUNCTUATION = ".,;:!?]}"
"""`see @notes.md.`: the full stop ends the sentence, not the file name."""


def command_parts(body: str, arguments: str) -> tuple[Part, ...]:
    """The template's parts with the arguments filled in; arguments given to a template
    that uses no placeholder are added at the end, as the seeds' system does."""
    words = _words(arguments)
    used = False

    def fill(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            nonlocal used
            used = True
            key = match.group(1)
            if key == "ARGUMENTS":
                value = arguments
            else:
                index = int(key) - 1
                value = words[index] if index < len(words) else ""
            return value

        return PLACEHOLDER.sub(one, text)

    parts: list[Part] = []
    at = 0
    for match in _SPECIAL.finditer(body):
        parts.append(Text(fill(body[at : match.start()])))
        if (command := match.group("command")) is not None:
            parts.append(_run(command, fill))
        else:
            written = match.group("path")
            path = written.rstrip(_TRAILING_PUNCTUATION)
            if path:
                parts.append(Include(fill(path)))
            parts.append(Text(written[len(path) :] if path else "@" + written))
        at = match.end()
    parts.append(Text(fill(body[at:])))
    kept = _stripped(parts)
    if arguments and not used:
        kept = (*kept, Text(f"\n\nARGUMENTS: {arguments}"))
    return kept


Quoting = Literal["'", '"', "$'", "$(", "(", "case", "#"] | None
"""Where a placeholder stands: unquoted (None, or inside `$(`, `(` or a `case`), in a
quote, or in a comment."""
_UNQUOTED: tuple[Quoting, ...] = (None, "$(", "(", "case")
_WORD_START = " \t;&|()"
_KEYWORDS = {"case": re.compile(r"case[ \t]"), "esac": re.compile(r"esac(?=$|[ \t;&|)])")}


_SUBSTITUTES = re.compile(r"\$\(|`")


def _run(command: str, fill: Callable[[str], str]) -> Run:
    """The run with its placeholders filled, or refused when a value holds `$(` or a
    backtick: Bash evaluates `$(( ))`, `[[ x -eq y ]]` and array indexes as arithmetic, and
    there even a quoted 'a[$(cmd)]' runs cmd, so no quoting makes such a value data
    everywhere. Arguments like that are rare; a run that does not happen is said."""
    if any(_SUBSTITUTES.search(fill(p.group(0))) for p in PLACEHOLDER.finditer(command)):
        why = "an argument holds $( or a backtick, which Bash may run wherever it reads numbers"
        return Run(command, refused=why)
    return Run(_fill_command(command, fill))


def _fill_command(command: str, fill: Callable[[str], str]) -> str:
    """`command` with each placeholder filled so that the shell reads its value as data
    where it stands: shell-quoted outside quotes, escaped inside "…" and $'…', and inside
    '…' with each `'` closed, escaped and reopened. Quoting it the same way everywhere would
    not do: `echo "$1"` given `"; touch x; "` would become `echo "'"; touch x; "'"`.

    Where it stands is tracked as the shell would, on a stack: a `$(` opens unquoted words
    again even inside "…", and ends at its own `)` (not a subshell's, nor a `case`
    pattern's); after a `#` that starts a word the rest is a comment, where a newline in the
    value would end it and start a command of its own."""
    out: list[str] = []
    stack: list[Quoting] = [None]
    at = 0
    while at < len(command):
        quote = stack[-1]
        char = command[at]
        if char == "\\" and quote not in ("'", "#") and at + 1 < len(command):
            out.append(command[at : at + 2])
            at += 2
            continue
        if (placeholder := PLACEHOLDER.match(command, at)) is not None:
            out.append(_escaped(fill(placeholder.group(0)), quote))
            at = placeholder.end()
            continue
        step = 1
        word_start = at == 0 or command[at - 1] in _WORD_START
        if quote == "#":
            pass  # the rest of the line is a comment
        elif quote in (None, "$(", "(", "case", '"') and command.startswith("$(", at):
            stack.append("$(")
            step = 2
        elif quote in _UNQUOTED and command.startswith("$'", at):
            stack.append("$'")
            step = 2
        elif quote in _UNQUOTED and char in "'\"":
            stack.append(char)  # type: ignore[arg-type]  # char is ' or "
        elif quote in _UNQUOTED and char == "#" and word_start:
            stack.append("#")
        elif quote in _UNQUOTED and word_start and _KEYWORDS["case"].match(command, at):
            stack.append("case")
            step = 4
        elif quote == "case" and word_start and _KEYWORDS["esac"].match(command, at):
            stack.pop()
            step = 4
        elif quote in _UNQUOTED and char == "(":
            stack.append("(")
        elif (quote in ("$(", "(") and char == ")") or (
            quote in ("'", '"', "$'") and char == quote[-1]
        ):
            stack.pop()  # the substitution, the subshell or the quote ends
        out.append(command[at : at + step])
        at += step
    return "".join(out)


def _escaped(value: str, quote: Quoting) -> str:
    if quote == "'":
        return value.replace("'", "'\\''")
    if quote == '"':
        return re.sub(r'([\\"$`])', r"\\\1", value)
    if quote == "$'":
        return value.replace("\\", "\\\\").replace("'", "\\'")
    if quote == "#":  # the comment ends at a newline: none may come from the value
        return shlex.quote(re.sub(r"[\r\n]", " ", value))
    return shlex.quote(value)


def plain_text(parts: tuple[Part, ...]) -> str:
    """The parts as the person reads them: includes as `@path`, runs as !`command`."""
    return "".join(_written(part) for part in parts)


def needs_preparing(parts: tuple[Part, ...]) -> bool:
    return any(not isinstance(part, Text) for part in parts)


def _written(part: Part) -> str:
    match part:
        case Text():
            return part.text
        case Include():
            return f"@{part.path}"
        case Run():
            return f"!`{part.command}`"


def _stripped(parts: list[Part]) -> tuple[Part, ...]:
    """Blank space trimmed at both ends of the whole, as the plain expansion always was."""
    kept: list[Part] = []
    for part in parts:  # neighbouring texts joined: `@a.md,` leaves "," beside the next text
        if isinstance(part, Text) and kept and isinstance(kept[-1], Text):
            kept[-1] = Text(kept[-1].text + part.text)
        elif not (isinstance(part, Text) and not part.text):
            kept.append(part)
    if kept and isinstance(kept[0], Text):
        kept[0] = Text(kept[0].text.lstrip())
    if kept and isinstance(kept[-1], Text):
        kept[-1] = Text(kept[-1].text.rstrip())
    return tuple(p for p in kept if not (isinstance(p, Text) and not p.text))


def _words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words rather than nothing
        return arguments.split()
