"""Grep: search file contents with ripgrep.

It runs the `rg` that the `ripgrep` wheel installs next to the interpreter, never one found on
PATH: the version is pinned, so its flags and output format are known, and a PATH lookup
would let whatever sits first on PATH answer (and read files) in its place.

ripgrep does the walking and matching; this module only builds the argument list and reads
the output back:

- `--null` ends every path with a NUL, so a path containing `:` cannot be mistaken for a
  line number, and line numbers are always requested (`-n` only decides whether they are
  shown), so context groups can be told apart without trusting ripgrep's `--` lines.
- The same ignore rules as Glob (search.py): hidden files searched, version-control
  directories not, `--no-require-git` only outside a git repository so that inside one the
  `.gitignore` files count exactly as git counts them.
- Read deny rules are passed as exclusion globs where they translate exactly, so those files
  are not even read; every result path is then checked against the rules anyway, which is
  the guarantee.
- ripgrep's order changes from run to run (it searches in parallel); results are regrouped
  per file and the files ordered newest first, ties by path, in every output mode, so equal
  searches give equal answers. `head_limit` and `offset` then page through the entries:
  output lines in content mode, files otherwise.
- ripgrep runs in its own process group, killed when the call is cancelled or aborted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field

from ..abort import start_whole
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
    ReadDenials,
    display_path,
    newest_first,
    printable,
    repository_root,
    root_problem,
    search_root,
)

OutputMode = Literal["content", "files_with_matches", "count"]

MAX_CONTEXT_LINES = 100
MAX_COLUMNS = 500
"""Longer lines (minified code, data) are shown as a preview of this many bytes."""
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
"""ripgrep output beyond this is not read: the search is too broad to be useful."""
_READ_CHUNK = 1024 * 1024
_STDERR_KEPT = 64 * 1024

PROMPT = """\
Search file contents with ripgrep (regular expressions).
- Use this rather than running grep or rg through a shell: it applies the session's read \
permissions and ignore rules and pages its output.
- Full regex syntax of ripgrep's Rust engine, e.g. "log.*Error", "function\\s+\\w+". Literal \
braces and other metacharacters need escaping: search for `interface\\{\\}` to find \
`interface{}`. Lookaround and backreferences are not supported.
- Narrow the files with `glob` ("*.js", "**/*.tsx", "*.{ts,tsx}") or `type` ("js", "py", \
"rust", ...), and the place with `path` (a directory or a single file).
- output_mode: "files_with_matches" (default) lists matching files; "content" shows matching \
lines (with `-n` line numbers, on by default, and `-A`/`-B`/`-C` context); "count" shows \
matching lines per file.
- Files are listed most recently modified first, paths relative to the working directory \
(absolute when outside it). `head_limit` and `offset` page through the entries: lines in \
content mode, files otherwise.
- Patterns match within one line; set `multiline: true` for patterns spanning lines (then `.` \
matches newlines too), e.g. `struct \\{[\\s\\S]*?field`.
- .gitignore'd files and version-control directories are skipped; hidden files are searched.
- For open-ended searches needing several rounds, delegate to an agent if one is available."""


class GrepInput(ToolInput):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(description="The regular expression to search for in file contents")
    path: str | None = Field(
        default=None,
        description="File or directory to search in. Defaults to the current working directory.",
    )
    glob: str | None = Field(
        default=None,
        description='Glob to filter files, e.g. "*.js", "*.{ts,tsx}"; several separated by spaces',
    )
    file_type: str | None = Field(
        default=None,
        alias="type",
        description="File type to search (ripgrep's names: js, py, rust, go, java, ...)",
    )
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description=(
            'Output mode: "content" shows matching lines, "files_with_matches" shows file '
            'paths (the default), "count" shows match counts per file'
        ),
    )
    multiline: bool = Field(
        default=False,
        description="Let patterns span lines and `.` match newlines. Default: false.",
    )
    case_insensitive: bool = Field(default=False, alias="-i", description="Case insensitive search")
    line_numbers: bool = Field(
        default=True,
        alias="-n",
        description="Show line numbers in output (content mode; default true)",
    )
    after: int | None = Field(
        default=None,
        alias="-A",
        ge=0,
        le=MAX_CONTEXT_LINES,
        description="Lines to show after each match (content mode)",
    )
    before: int | None = Field(
        default=None,
        alias="-B",
        ge=0,
        le=MAX_CONTEXT_LINES,
        description="Lines to show before each match (content mode)",
    )
    context: int | None = Field(
        default=None,
        alias="-C",
        ge=0,
        le=MAX_CONTEXT_LINES,
        description="Lines to show before and after each match (content mode)",
    )
    head_limit: int | None = Field(
        default=None,
        ge=0,
        description=(
            "Show at most this many entries (lines in content mode, files otherwise); "
            "0 or omitted means all"
        ),
    )
    offset: int = Field(
        default=0, ge=0, description="Skip this many entries first (for paging). Default 0."
    )


@dataclass(frozen=True, slots=True)
class GrepOutput:
    mode: OutputMode
    entries: tuple[str, ...]
    """The page shown: lines (content), `path` (files) or `path:count` (count)."""
    total_entries: int
    files: int
    """Files with matches, after deny rules."""
    matches: int
    """Matching lines in count mode (all files), else 0."""
    offset: int
    end: int
    """Index after the last entry shown: where the next page starts."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RgRun:
    returncode: int
    stdout: bytes
    stderr: str
    interrupted: bool = False
    overflowed: bool = False


class GrepTool(Tool[GrepInput, GrepOutput]):
    name = "Grep"
    headline_field = "pattern"
    subagents = "every"
    search_hint = "search file contents regex ripgrep"
    input_model = GrepInput
    description = "Search file contents with ripgrep"
    interrupt_behavior = "cancel"
    max_result_size_chars = 20_000

    instructions = PROMPT

    def is_read_only(self, input: GrepInput) -> bool:
        return True

    def is_concurrency_safe(self, input: GrepInput) -> bool:
        return True

    def rule_target(self, input: GrepInput, cwd: Path) -> RuleTarget:
        return PathTarget(search_root(input.path, cwd), "read")

    async def validate_input(self, input: GrepInput, context: ToolContext) -> ValidationResult:
        if not input.pattern:
            return ValidationResult.failed(
                "The pattern is empty, which matches every line. Give a regular expression "
                "to search for."
            )
        if "\0" in input.pattern:
            return ValidationResult.failed("The pattern contains a NUL character; remove it.")
        if input.glob is not None and not split_globs(input.glob):
            return ValidationResult.failed(
                'The glob is empty. Omit it, or give one such as "*.py" or "*.{ts,tsx}".'
            )
        if input.file_type is not None and not re.fullmatch(r"[\w+-]+", input.file_type):
            return ValidationResult.failed(
                f"Invalid file type {input.file_type!r}: give one of ripgrep's type names "
                '(such as "py", "js", "rust"), or filter by name with glob instead.'
            )
        return ValidationResult.passed()

    async def call(
        self, input: GrepInput, context: ToolContext, progress: Progress
    ) -> ToolResult[GrepOutput]:
        rg = rg_path()
        if rg is None:
            return failure(
                "ripgrep is not installed next to the Python interpreter "
                f"({sysconfig.get_path('scripts')}), so Grep cannot run. Ask the user to "
                "reinstall proctor's dependencies (the `ripgrep` package)."
            )
        cwd = context.cwd
        root = search_root(input.path, cwd)
        problem = root_problem(root, input.path, cwd, want_directory=False)
        if problem:
            return failure(problem)
        denials = ReadDenials.of(context.permission_context, cwd)
        argv = build_argv(rg, input, root, cwd, denials)
        result = await run_rg(argv, cwd, context)
        if result.interrupted:
            return failure("The search was interrupted before it finished.")
        if result.overflowed:
            return failure(
                f"The search produced more than {MAX_OUTPUT_BYTES // (1024 * 1024)} MB of "
                "output and was stopped. Narrow it with a more specific pattern, a path, glob "
                "or type, or use output_mode 'files_with_matches' or 'count'."
            )
        if result.returncode == 2 and not result.stdout:
            return failure(rg_error_text(result.stderr, input))
        if result.returncode not in (0, 1, 2):
            return failure(
                f"ripgrep failed (exit status {result.returncode}): "
                f"{first_lines(result.stderr) or 'no message'}."
            )
        # Parsing stats every matching file (to sort): off the event loop, like the search.
        output = await asyncio.to_thread(parse, input, result.stdout, cwd, denials)
        if result.returncode == 2 and result.stderr.strip():
            note = f"Some paths could not be searched: {first_lines(result.stderr)}"
            output = replace(output, notes=(*output.notes, note))
        return ToolResult(output)

    def render(self, output: GrepOutput) -> ToolContent:
        return render(output)


# -- running ripgrep --------------------------------------------------------------------------


@cache
def rg_path() -> str | None:
    """The `rg` of the ripgrep wheel: in this environment's scripts directory, or beside the
    interpreter (a user install puts scripts elsewhere; PATH is never consulted)."""
    name = "rg.exe" if os.name == "nt" else "rg"
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def split_globs(text: str) -> list[str]:
    """Globs separated by whitespace or by commas outside braces (`*.{ts,tsx}` stays one)."""
    globs: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
        if (char.isspace() or (char == "," and depth == 0)) and depth == 0:
            if current:
                globs.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        globs.append("".join(current))
    return globs


def build_argv(rg: str, input: GrepInput, root: Path, cwd: Path, denials: ReadDenials) -> list[str]:
    argv = [rg, "--no-config", "--hidden", "--color=never", "--null"]
    if repository_root(root) is None:
        argv.append("--no-require-git")
    if input.output_mode == "files_with_matches":
        argv.append("--files-with-matches")
    elif input.output_mode == "count":
        argv += ["--count", "--with-filename"]
    else:
        argv += ["--line-number", "--with-filename", "--no-heading"]
        argv += ["--max-columns", str(MAX_COLUMNS), "--max-columns-preview"]
        if input.context is not None:
            argv += ["--context", str(input.context)]
        if input.after is not None:
            argv += ["--after-context", str(input.after)]
        if input.before is not None:
            argv += ["--before-context", str(input.before)]
    if input.case_insensitive:
        argv.append("--ignore-case")
    if input.multiline:
        argv += ["--multiline", "--multiline-dotall"]
    if input.file_type:
        argv += ["--type", input.file_type]
    for glob in split_globs(input.glob or ""):
        argv += ["--glob", glob]
    # After the user's globs: a later glob wins in ripgrep (a user's `*` would otherwise
    # bring `.git` back), and these must.
    for glob in (*(f"!{name}" for name in VCS_DIRECTORIES), *denials.rg_globs()):
        argv += ["--glob", glob]
    argv += ["--regexp", input.pattern, "--", rg_root(root, cwd)]
    return argv


def rg_root(root: Path, cwd: Path) -> str:
    """The search path as given to ripgrep, which prints result paths the way it was given:
    relative to the working directory when inside it (`.` for the directory itself)."""
    shown = display_path(os.fspath(root), cwd)
    if root == cwd:
        return "."
    return shown


async def run_rg(argv: Sequence[str], cwd: Path, context: ToolContext) -> RgRun:
    process = await _start(argv, cwd)

    def kill(_reason: str = "") -> None:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)

    overflowed = False

    async def read_stdout() -> bytes:
        nonlocal overflowed
        assert process.stdout is not None
        chunks: list[bytes] = []
        size = 0
        while chunk := await process.stdout.read(_READ_CHUNK):
            size += len(chunk)
            if size > MAX_OUTPUT_BYTES:
                overflowed = True
                kill()
                break
            chunks.append(chunk)
        return b"".join(chunks)

    async def read_stderr() -> bytes:
        assert process.stderr is not None
        # Read to the end (a short read is only the first write), keeping the start.
        kept = bytearray()
        while chunk := await process.stderr.read(_READ_CHUNK):
            if len(kept) < _STDERR_KEPT:
                kept += chunk[: _STDERR_KEPT - len(kept)]
        return bytes(kept)

    remove = context.abort.add_listener(kill)
    try:
        stdout, stderr, returncode = await asyncio.gather(
            read_stdout(), read_stderr(), process.wait()
        )
    finally:
        remove()
        kill()
        if process.returncode is None:
            # Cancelled: the group is killed; reap it so no zombie is left behind.
            with contextlib.suppress(Exception):
                await asyncio.shield(process.wait())
    return RgRun(
        returncode,
        stdout,
        stderr.decode("utf-8", "replace"),
        interrupted=context.abort.aborted,
        overflowed=overflowed,
    )


async def _start(argv: Sequence[str], cwd: Path) -> asyncio.subprocess.Process:
    return await start_whole(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        ),
        _kill_group,
    )


async def _kill_group(process: asyncio.subprocess.Process) -> None:
    """Kill rg's whole group and reap it, as for a call cancelled while it runs."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        await asyncio.shield(process.wait())


def rg_error_text(stderr: str, input: GrepInput) -> str:
    message = first_lines(stderr, 12) or "no message"
    if "regex parse error" in stderr or "error parsing regex" in stderr:
        return (
            f"Invalid regular expression {input.pattern!r}: {message}\nFix the pattern: "
            "escape literal metacharacters such as ( ) [ ] { } . * + ? with a backslash."
        )
    if "unrecognized file type" in stderr:
        return (
            f"Unknown file type {input.file_type!r} ({message}). Use one of ripgrep's type "
            'names such as "py", "js", "ts", "rust", "go", or filter by name with glob.'
        )
    if "glob" in stderr.lower():
        return f"Invalid glob {input.glob!r}: {message}"
    return f"ripgrep could not search: {message}"


def first_lines(text: str, count: int = 5) -> str:
    lines = [line.removeprefix("rg: ") for line in text.strip().splitlines() if line.strip()]
    shown = "\n".join(lines[:count])
    if len(lines) > count:
        shown += f"\n(and {len(lines) - count} more)"
    return shown


# -- reading the output -----------------------------------------------------------------------

_LINE = re.compile(rb"(\d+)([:-])")


def _shown(raw: bytes) -> str:
    """A path as ripgrep printed it, which is how it is shown: relative to the working
    directory (without the `./` a search of `.` adds), or absolute when outside it."""
    text = os.fsdecode(raw)
    return text[2:] if text.startswith("./") else text


def _files(shown: list[str], cwd: Path, denials: ReadDenials) -> list[str]:
    """Deny rules applied, newest first."""
    return newest_first(denials.visible(shown, cwd), cwd)


def parse(input: GrepInput, stdout: bytes, cwd: Path, denials: ReadDenials) -> GrepOutput:
    if input.output_mode == "files_with_matches":
        ordered = _files([_shown(raw) for raw in stdout.split(b"\0") if raw], cwd, denials)
        return _page(input, ordered, len(ordered), 0)
    if input.output_mode == "count":
        counts: dict[str, int] = {}
        for line in stdout.splitlines():
            raw, sep, number = line.partition(b"\0")
            if sep and number.strip().isdigit():
                counts[_shown(raw)] = int(number)
        ordered = _files(list(counts), cwd, denials)
        entries = [f"{path}:{counts[path]}" for path in ordered]
        return _page(input, entries, len(ordered), sum(counts[path] for path in ordered))
    return _content(input, stdout, cwd, denials)


def _content(input: GrepInput, stdout: bytes, cwd: Path, denials: ReadDenials) -> GrepOutput:
    per_file: dict[str, list[tuple[int, bytes, bytes]]] = {}
    notes: list[str] = []
    for line in stdout.split(b"\n"):
        raw, sep, rest = line.partition(b"\0")
        if not sep:
            # `--` context separators (rebuilt below) and ripgrep's binary-file notices.
            notice = line.decode("utf-8", "replace").strip()
            if notice and notice != "--":
                notes.append(notice)
            continue
        found = _LINE.match(rest)
        if found is None:
            continue
        number, kind = int(found.group(1)), found.group(2)
        text = rest[found.end() :]
        if text.endswith(b"\r"):
            text = text[:-1]  # CRLF files: the line, not its line ending
        per_file.setdefault(_shown(raw), []).append((number, kind, text))
    ordered = _files(list(per_file), cwd, denials)
    with_context = bool(input.context or input.after or input.before)
    entries: list[str] = []
    for shown in ordered:
        if with_context and entries:
            entries.append("--")
        previous = None
        for number, kind, text in per_file[shown]:
            if with_context and previous is not None and number != previous + 1:
                entries.append("--")
            previous = number
            body = text.decode("utf-8", "replace")
            mark = kind.decode()
            entries.append(
                f"{shown}{mark}{number}{mark}{body}"
                if input.line_numbers
                else f"{shown}{mark}{body}"
            )
    output = _page(input, entries, len(ordered), 0)
    if notes:
        output = replace(output, notes=tuple(notes[:5]))
    return output


def _page(input: GrepInput, entries: list[str], files: int, matches: int) -> GrepOutput:
    end = input.offset + input.head_limit if input.head_limit else len(entries)
    end = min(end, len(entries))
    page = [printable(entry) for entry in entries[input.offset : end]]
    if input.output_mode == "content":
        # A page never starts or ends on a bare context separator.
        while page and page[0] == "--":
            page = page[1:]
        while page and page[-1] == "--":
            page = page[:-1]
    return GrepOutput(
        input.output_mode, tuple(page), len(entries), files, matches, input.offset, end
    )


def render(output: GrepOutput) -> str:
    notes = [f"({note})" for note in output.notes]
    if output.total_entries == 0:
        return "\n".join(["No matches found.", *notes])
    if not output.entries:
        return "\n".join(
            [
                f"No entries at offset {output.offset}: the search found only "
                f"{output.total_entries}. Use a smaller offset.",
                *notes,
            ]
        )
    shown_end = output.end
    paged = output.offset > 0 or shown_end < output.total_entries
    lines: list[str] = []
    if output.mode == "files_with_matches":
        noun = "file" if output.files == 1 else "files"
        lines.append(f"Found {output.files} {noun}")
    lines.extend(output.entries)
    if output.mode == "count":
        noun = "file" if output.files == 1 else "files"
        lines.append(f"\nFound {output.matches} matching lines in {output.files} {noun}.")
    if paged:
        what = "lines" if output.mode == "content" else "files"
        more = f" Use offset={shown_end} to see more." if shown_end < output.total_entries else ""
        lines.append(
            f"(Showing {what} {output.offset + 1}-{shown_end} of {output.total_entries}.{more})"
        )
    lines.extend(notes)
    return "\n".join(lines)
