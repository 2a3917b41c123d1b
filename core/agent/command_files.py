"""Custom slash commands read from `commands/` folders of Markdown files.

Where, first found wins for a name: proctor's own `<config dir>/commands/`, the user's
`~/.claude/commands/` (in `CLAUDE_CONFIG_DIR` when set, as settings/paths.py finds the user's
Claude settings), then the project's `.claude/commands/`. The person's own commands come
first, as their skills do (core/agent/skills.py): a cloned repository must not quietly
replace the `/review` the person types every day with a prompt of its own; the project's
file of that name is reported instead. A file `review.md` is `/review`;
one in a subfolder, `frontend/build.md`, is `/build` shown as `(project:frontend)` and also
answers to `/frontend:build`, which tells two `build.md` apart.

The front matter is the small YAML people write at the top of these files, between `---`
lines: `key: value`, a quoted value, or a `[a, b]` list. It is read by hand rather than with
a YAML library (none is a dependency, and four keys do not need one). Keys proctor does not
use are passed over (the seeds' system has more); a line that is not `key: value`, or front
matter that never closes, is a problem with the file and line, and that command is left out
while the others load. A file that cannot be read is a problem too, never a crash.

Trust: a project's commands come from whatever was cloned. They only become prompts, so the
model's calls still meet the permission chain; `allowed-tools` only narrows the command's
turn (commands.py), never turned into allow rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..access.rules import RuleSyntaxError, parse_rule
from ..config_dir import user_config_dir
from ..settings.paths import claude_user_dir
from .commands import CommandScope, CustomCommand

MAX_COMMAND_BYTES = 256 * 1024
"""Larger files are not prompts anyone wrote by hand: reported, not read."""


@dataclass(frozen=True, slots=True)
class CommandFileProblem:
    path: Path
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message} (this command is left out)"


class FrontMatterError(ValueError):
    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line


def command_dirs(cwd: Path, *, claude_user: bool = True) -> list[tuple[CommandScope, Path]]:
    """`claude_user`: whether the user's Claude folder is read (`readClaudeSettings: false`
    or `PROCTOR_NO_CLAUDE_SETTINGS` keep it out, as they keep out its CLAUDE.md)."""
    dirs: list[tuple[CommandScope, Path]] = [("proctor", user_config_dir() / "commands")]
    if claude_user:
        dirs.append(("user", claude_user_dir() / "commands"))
    return [*dirs, ("project", cwd / ".claude" / "commands")]


def load_custom_commands(
    cwd: Path,
    dirs: Iterable[tuple[CommandScope, Path]] | None = None,
    *,
    claude_user: bool = True,
) -> tuple[list[CustomCommand], list[CommandFileProblem]]:
    commands: list[CustomCommand] = []
    problems: list[CommandFileProblem] = []
    if dirs is None:
        dirs = command_dirs(cwd, claude_user=claude_user)
    for scope, folder in dirs:
        try:
            # A folder's own files first: a top-level build.md is `/build` before any
            # frontend/build.md (which stays `/frontend:build`).
            found_files = folder.rglob("*.md") if folder.is_dir() else ()
            files = sorted(found_files, key=lambda p: (len(p.parts), p))
        except OSError as error:
            problems.append(CommandFileProblem(folder, None, f"cannot be listed: {error}"))
            continue
        for path in files:
            found = read_command_file(path, folder, scope)
            if isinstance(found, CustomCommand):
                own = _own_named(commands, found.name) if scope == "project" else None
                if own is not None and not found.namespace:  # namespaced: /ns:name still works
                    hidden = f"hidden by your own /{own.name} ({own.path})"
                    problems.append(CommandFileProblem(path, None, hidden))
                commands.append(found)
            else:
                problems.append(found)
    return commands, problems


def _own_named(commands: Iterable[CustomCommand], name: str) -> CustomCommand | None:
    """The person's own command (proctor's or the user's folder) called `name`, if any."""
    return next((c for c in commands if c.scope != "project" and c.name == name), None)


def read_command_file(
    path: Path, root: Path, scope: CommandScope
) -> CustomCommand | CommandFileProblem:
    try:
        if not path.is_file():  # a FIFO would block the read, and with it start-up, forever
            return CommandFileProblem(path, None, "is not a regular file")
        if scope == "project" and not path.resolve().is_relative_to(root.parent.parent.resolve()):
            # A link to ~/.ssh/id_rsa would be sent to the model by typing its name.
            return CommandFileProblem(path, None, "is a link to a file outside the project")
        if path.stat().st_size > MAX_COMMAND_BYTES:
            return CommandFileProblem(path, None, f"is larger than {MAX_COMMAND_BYTES // 1024} KB")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return CommandFileProblem(path, None, f"cannot be read: {error}")
    relative = path.relative_to(root).with_suffix("")
    name = relative.name
    namespace = ":".join(relative.parts[:-1])
    if not name or " " in name:
        return CommandFileProblem(path, None, "a command's file name may not contain spaces")
    try:
        meta, body = split_front_matter(text)
        return CustomCommand(
            name=name,
            body=body,
            path=path,
            scope=scope,
            description=_text(meta, "description"),
            argument_hint=_text(meta, "argument-hint"),
            allowed_tools=_tools(meta.get("allowed-tools")),
            model=_text(meta, "model") or None,
            namespace=namespace,
        )
    except FrontMatterError as error:
        return CommandFileProblem(path, error.line, str(error))


FrontValue = str | list[str]


def split_front_matter(text: str) -> tuple[dict[str, FrontValue], str]:
    """(the front matter's keys, the body). No front matter: ({}, the whole text)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    if not any(line.strip() == "---" for line in lines[1:]):
        raise FrontMatterError(1, "the front matter opened with `---` never closes")
    meta: dict[str, FrontValue] = {}
    lines_of: dict[str, int] = {}
    key_of_list: str | None = None
    for number, line in enumerate(lines[1:], start=2):
        stripped = line.strip()
        if stripped == "---":
            if isinstance(tools := meta.get("allowed-tools"), str) and tools.startswith("["):
                meta["allowed-tools"] = _value(tools, lines_of["allowed-tools"])
            return meta, "\n".join(lines[number:])
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") and key_of_list is not None:  # a block list's item
            items = meta.get(key_of_list)
            if not isinstance(items, list):  # the key's first item: it holds a list
                items = meta[key_of_list] = []
            items.append(_unquote(stripped[2:].strip(), number))
            continue
        key, colon, value = stripped.partition(":")
        if not colon or not key.strip() or " " in key.strip():
            raise FrontMatterError(number, f"expected `key: value`, found {stripped[:40]!r}")
        key, value = key.strip(), value.strip()
        key_of_list = key if not value else None
        # Kept as written: `argument-hint: [message]` is text to people, though YAML
        # would read a list; only `allowed-tools` is read as one (`_tools`).
        meta[key] = value if value.startswith("[") else _unquote(value, number) if value else ""
        lines_of[key] = number
    raise FrontMatterError(1, "the front matter opened with `---` never closes")


def _value(value: str, line: int) -> FrontValue:
    if value.startswith("["):
        if not value.endswith("]"):
            raise FrontMatterError(line, "a list opened with `[` does not close on its line")
        return [_unquote(item.strip(), line) for item in value[1:-1].split(",") if item.strip()]
    return _unquote(value, line)


def _unquote(value: str, line: int) -> str:
    if value[:1] in ("'", '"'):
        if len(value) < 2 or value[-1] != value[0]:
            raise FrontMatterError(line, f"a quoted value does not close: {value[:40]}")
        return value[1:-1]
    return value


def _text(meta: dict[str, FrontValue], key: str) -> str:
    value = meta.get(key, "")
    if isinstance(value, list):
        raise FrontMatterError(None, f"`{key}` should be text, not a list")
    return value


def _tools(value: FrontValue | None) -> tuple[str, ...] | None:
    """`Bash(git add:*), Read` or a list: a comma inside parentheses does not split. Each
    must read as a rule: a list that cannot be read would narrow to who knows what."""
    if value is None:
        return None
    items = value if isinstance(value, list) else _split_top_level(value)
    tools = tuple(item.strip() for item in items if item.strip())
    for tool in tools:
        try:
            parse_rule(tool, "allow")
        except RuleSyntaxError as error:
            raise FrontMatterError(None, f"allowed-tools: {error}") from None
    return tools


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]
