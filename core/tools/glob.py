"""Glob: find files by name pattern, most recently modified first.

Patterns are shell globs anchored at the search directory, not gitignore patterns: `*.py` is
the Python files at the top level only, `**/*.py` those at any depth, `src/**/*.ts` those
anywhere under `src`. That is what the pattern says when read as a path, and it is the only
reading under which `src/*.py` and `*.py` behave alike. `*` and `?` never cross a `/`, `**`
as a whole component matches any number of directories (none included), `[abc]`/`[!abc]`
are character classes and `{a,b}` alternatives. `*` matches dotfiles too.

An absolute pattern (`/work/app/src/**/*.py`), or one starting with literal directories or
`..` (`../lib/*.py`), has those directories folded into the search root, so the walk starts
where the pattern does and the permission target is the directory actually searched.

The walk is Python's `os.scandir`, pruned by ignore files, version-control directories, Read
deny rules and, for patterns without `**`, by depth; it runs in a thread, so the event loop
stays free, and stops when the call is aborted. What the walk keeps and what it skips is
decided in search.py, which Grep shares.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from ..access.paths import absolute
from ..access.targets import PathTarget, RuleTarget
from ..tool import (
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolResult,
    ValidationResult,
    failure,
)
from .search import (
    VCS_DIRECTORIES,
    IgnoreLayer,
    ReadDenials,
    display_path,
    is_ignored,
    layers_in,
    newest_first,
    parent_layers,
    printable,
    repository_root,
    root_problem,
    search_root,
)

MAX_FILES = 100
MAX_ALTERNATIVES = 256
"""Brace expansion beyond this is a pattern better written another way."""
_META = frozenset("*?[{")

PROMPT = """\
Find files by name with a glob pattern. Fast on any size of project.
- Patterns are relative to the search directory: "*.py" matches only its top level, "**/*.py" \
every depth, "src/**/*.ts" anything under src; {a,b} alternatives and [abc] classes work too.
- Files ignored by .gitignore (and .ignore) are left out, as are version-control directories; \
hidden files are included.
- Returns at most 100 paths, most recently modified first, relative to the working directory \
(absolute when outside it); Read needs the absolute path, so join it with the working directory.
- To search file contents, use Grep. For open-ended exploration that needs several rounds of \
searching, delegate to an agent if one is available.
- Several independent searches are best made in parallel, in one response."""


class GlobInput(ToolInput):
    pattern: str = Field(description="The glob pattern to match file paths against")
    path: str | None = Field(
        default=None,
        description=(
            "The directory to search in. Defaults to the current working directory; omit it "
            "rather than passing an empty value."
        ),
    )


class PatternError(ValueError):
    """A pattern that cannot mean anything: the message says why."""


@dataclass(frozen=True, slots=True)
class GlobPlan:
    """Where the walk starts and what it matches there."""

    root: Path
    pattern: str
    """The part of the pattern below `root` (posix separators)."""
    regex: re.Pattern[str]
    max_depth: int | None
    """Deepest level a match can be at (1 is the root's own entries); None with `**`."""


@dataclass(frozen=True, slots=True)
class GlobOutput:
    files: tuple[str, ...]
    """As shown: relative to the working directory when inside it, else absolute."""
    total: int
    root: str
    pattern: str
    truncated: bool
    duration_ms: float


class GlobTool(Tool[GlobInput, GlobOutput]):
    name = "Glob"
    headline_field = "pattern"
    subagents = "every"
    search_hint = "find files by name glob pattern"
    input_model = GlobInput
    description = "Find files by glob pattern, newest first"
    interrupt_behavior = "cancel"
    max_result_size_chars = 30_000

    instructions = PROMPT

    def is_read_only(self, input: GlobInput) -> bool:
        return True

    def is_concurrency_safe(self, input: GlobInput) -> bool:
        return True

    def rule_target(self, input: GlobInput, cwd: Path) -> RuleTarget:
        try:
            root = plan(input, cwd).root
        except PatternError:
            root = search_root(input.path, cwd)
        return PathTarget(root, "read")

    async def validate_input(self, input: GlobInput, context: ToolContext) -> ValidationResult:
        try:
            plan(input, context.cwd)
        except PatternError as error:
            return ValidationResult.failed(str(error))
        return ValidationResult.passed()

    async def call(
        self, input: GlobInput, context: ToolContext, progress: Progress
    ) -> ToolResult[GlobOutput]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            how = plan(input, context.cwd)
        except PatternError as error:
            return failure(str(error))
        # Checked here, after the permission decision, so a denied path's existence stays unsaid.
        problem = root_problem(how.root, input.path, context.cwd, want_directory=True)
        if problem:
            return failure(problem)
        denials = ReadDenials.of(context.permission_context, context.cwd)
        stop = threading.Event()
        remove = context.abort.add_listener(lambda _reason: stop.set())
        try:
            # Sorting stats every match: that too stays off the event loop.
            ordered = await asyncio.to_thread(
                lambda: newest_first(find(how, denials, stop.is_set), how.root)
            )
        finally:
            stop.set()
            remove()
        if context.abort.aborted:
            return failure("The search was interrupted before it finished.")
        shown = tuple(printable(display_path(path, context.cwd)) for path in ordered[:MAX_FILES])
        return ToolResult(
            GlobOutput(
                files=shown,
                total=len(ordered),
                root=str(how.root),
                pattern=input.pattern,
                truncated=len(ordered) > MAX_FILES,
                duration_ms=(loop.time() - started) * 1000,
            )
        )

    def render(self, output: GlobOutput) -> ToolContent:
        return render(output)


def render(output: GlobOutput) -> str:
    if not output.files:
        text = f"No files found matching {output.pattern!r} in {output.root}."
        if "/" not in output.pattern and "**" not in output.pattern:
            text += (
                f" The pattern is matched from that directory down, so {output.pattern!r} "
                f"only looks at its top level; use '**/{output.pattern}' to look at every depth."
            )
        return text
    lines = list(output.files)
    if output.truncated:
        lines.append(
            f"(Results are truncated: showing the {len(output.files)} most recently modified "
            f"of {output.total} matching files. Use a more specific pattern or path to see "
            "the others.)"
        )
    return "\n".join(lines)


# -- patterns ---------------------------------------------------------------------------------


def plan(input: GlobInput, cwd: Path) -> GlobPlan:
    """Split the pattern into the directory it starts from and the glob below it."""
    pattern = input.pattern.replace("\\", "/") if os.sep == "\\" else input.pattern
    if not pattern.strip():
        raise PatternError("The pattern is empty. Give a glob such as '**/*.py' or 'src/**/*.ts'.")
    if "\0" in pattern:
        raise PatternError("The pattern contains a NUL character, which no path can hold.")
    if pattern.startswith("~"):
        pattern = os.path.expanduser(pattern)
    base = search_root(input.path, cwd)
    if pattern.startswith("/"):
        base, pattern = Path("/"), pattern.lstrip("/")
    parts = [part for part in pattern.split("/") if part not in ("", ".")]
    if not parts:
        raise PatternError(
            f"The pattern {input.pattern!r} names a directory, not files. Add a file pattern, "
            "such as '/*' for its top level or '/**/*' for everything below it."
        )
    literal = 0
    while literal < len(parts) - 1 and not _META.intersection(parts[literal]):
        literal += 1
    rest = parts[literal:]
    if ".." in rest:
        raise PatternError(
            f"The pattern {input.pattern!r} has '..' after a wildcard. Put every '..' before "
            "the first wildcard, or pass the directory as the path."
        )
    root = absolute(os.path.join(base, *parts[:literal]), cwd) if literal else base
    below = "/".join(rest)
    alternatives = expand_braces(below)
    regex = re.compile("|".join(f"(?:{translate(alt)})" for alt in alternatives))
    deep = any("**" in alt for alt in alternatives)
    depth = None if deep else max(len(alt.strip("/").split("/")) for alt in alternatives)
    return GlobPlan(root, below, regex, depth)


def expand_braces(pattern: str) -> list[str]:
    """`a{b,c{d,e}}` -> `ab`, `acd`, `ace`, as a shell expands them; unbalanced braces and
    braces without a comma stay literal."""
    results = [pattern]
    expanded: list[str] = []
    while results:
        current = results.pop()
        span = _first_group(current)
        if span is None:
            expanded.append(current)
        else:
            start, end, options = span
            results.extend(current[:start] + option + current[end:] for option in options)
        if len(expanded) + len(results) > MAX_ALTERNATIVES:
            raise PatternError(
                f"The pattern's {{a,b}} alternatives expand to more than {MAX_ALTERNATIVES} "
                "patterns. Use fewer alternatives or a broader wildcard."
            )
    return sorted(set(expanded))


def _first_group(pattern: str) -> tuple[int, int, list[str]] | None:
    """The first outermost `{...}` holding a top-level comma: (start, end, options)."""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth, options, piece_start = 0, [], index + 1
            for cursor in range(index, len(pattern)):
                c = pattern[cursor]
                if c == "\\":
                    continue
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        options.append(pattern[piece_start:cursor])
                        if len(options) > 1:
                            return index, cursor + 1, options
                        break
                elif c == "," and depth == 1:
                    options.append(pattern[piece_start:cursor])
                    piece_start = cursor + 1
        index += 1
    return None


def translate(pattern: str) -> str:
    """A brace-free glob as a regular expression over posix paths relative to the root."""
    parts = pattern.split("/")
    out: list[str] = []
    for number, part in enumerate(parts):
        last = number == len(parts) - 1
        if part == "**":
            # Any number of directories (none included); at the end, anything below.
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append(_component(part) + ("" if last else "/"))
    return "".join(out)


def _component(part: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(part):
        char = part[index]
        if char == "*":
            while index + 1 < len(part) and part[index + 1] == "*":
                index += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = part.find(
                "]", index + 2 if part[index + 1 : index + 2] in ("!", "^") else index + 1
            )
            if end == -1:
                out.append(re.escape(char))
            else:
                body = part[index + 1 : end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                body = body.replace("\\", "\\\\").replace("[", "\\[")
                out.append(f"[{'^/' if negate else ''}{body}]")
                index = end
        elif char == "\\" and index + 1 < len(part):
            index += 1
            out.append(re.escape(part[index]))
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


# -- the walk ---------------------------------------------------------------------------------


def find(how: GlobPlan, denials: ReadDenials, stopped: Callable[[], bool]) -> list[str]:
    """Absolute paths of the files under the plan's root that match, are not ignored and are
    not hidden by a deny rule. Stops early (with what it has) once `stopped()` says so."""
    repository = repository_root(how.root)
    top = parent_layers(how.root, repository)
    matches: list[str] = []
    fullmatch = how.regex.fullmatch
    pending: list[tuple[str, str, int, list[IgnoreLayer]]] = [(os.fspath(how.root), "", 1, top)]
    while pending:
        if stopped():
            break
        directory, relative, depth, layers = pending.pop()
        if relative:
            own = layers_in(directory, relative)
            if own:
                layers = [*layers, *own]
        try:
            with os.scandir(directory) as entries:
                listed = list(entries)
        except OSError:
            continue  # unreadable or vanished: nothing below it can be listed
        for entry in listed:
            name = entry.name
            child = f"{relative}/{name}" if relative else name
            try:
                if entry.is_symlink():
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if name in VCS_DIRECTORIES:
                    continue
                if how.max_depth is not None and depth >= how.max_depth:
                    continue
                if is_ignored(layers, child, True):
                    continue
                if denials and denials.hides_directory(entry.path):
                    continue
                pending.append((entry.path, child, depth + 1, layers))
            elif (
                fullmatch(child) is not None
                and entry.is_file(follow_symlinks=False)
                and not is_ignored(layers, child, False)
            ):
                matches.append(entry.path)
    return denials.visible(matches)
