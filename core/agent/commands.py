"""Slash commands: what `/name args` typed in the prompt (or given to `-p`) means.

Two closed kinds. A `BuiltinCommand` is data: its name, what it does in a sentence, and an
`action` from a closed set that the front end (or the headless runner) carries out, since
most of them act on the screen. A `CustomCommand` is a prompt template read from a
`commands/*.md` file (command_files.py): running one sends its body, arguments filled in,
to the model like any typed prompt, so everything it leads to still goes through the
permission chain. Its `allowed-tools` never grants anything (a cloned repository's file must
not approve its own calls): it only narrows its turn, as a skill's does (the same
`SkillScope`, core/permissions/skill_scope.py), so a call outside the list is refused and one
inside it still meets the rules, the mode and the person.

`resolve` turns a typed line into one `Resolved` value, so a front end handles each case
once: not a command at all (a path such as `/etc/hosts ...` is a prompt), an unknown command
(said to the person, never sent to the model), a built-in to run, or a prompt to send.
Built-ins win over custom commands of the same name: a project cannot replace `/permissions`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from ..access.context import SkillScope
from ..access.rules import parse_rule
from ..app_state import AppState
from ..tools.arguments import expand  # shared with skills (core/tools/skill.py)
from .command_parts import Part, Text, command_parts, plain_text

BuiltinAction = Literal[
    "help",
    "clear",
    "model",
    "mode",
    "permissions",
    "todos",
    "cost",
    "mcp",
    "sessions",
    "resume",
    "compact",
    "memory",
    "status",
]
CommandScope = Literal["project", "user", "proctor"]


@dataclass(frozen=True, slots=True)
class BuiltinCommand:
    name: str
    description: str
    action: BuiltinAction
    argument_hint: str = ""
    headless: bool = False
    """Whether `-p "/name"` can run it (it needs no screen)."""
    needs_mcp: bool = False
    """Listed only when the session has MCP servers."""


@dataclass(frozen=True, slots=True)
class CustomCommand:
    name: str
    body: str
    path: Path
    scope: CommandScope
    description: str = ""
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] | None = None
    """None: the file lists none, so the turn is not narrowed; () narrows it to nothing."""
    model: str | None = None
    namespace: str = ""
    """The subfolder it sits in (`frontend` for commands/frontend/build.md), or ""."""
    frame: tuple[str, str] | None = None
    """A skill the person runs as `/name` (core/agent/skills.py): the text around its body,
    which arguments are not filled into; None for a commands/*.md file."""

    @property
    def skill(self) -> bool:
        return self.frame is not None

    @property
    def label(self) -> str:
        """Where it comes from, as the seeds' system shows it: `project:frontend`."""
        where = f"{self.scope}:{self.namespace}" if self.namespace else self.scope
        return f"{where} skill" if self.skill else where


Command = BuiltinCommand | CustomCommand

BUILTINS: tuple[BuiltinCommand, ...] = (
    BuiltinCommand("help", "List the slash commands", "help", headless=True),
    BuiltinCommand("clear", "Start a new conversation (the session and its files stay)", "clear"),
    BuiltinCommand(
        "compact", "Summarise the conversation now to free context", "compact", "[what to keep]"
    ),
    BuiltinCommand("model", "Show the model, or use another from now on", "model", "[name]"),
    BuiltinCommand("mode", "Show or switch the permission mode", "mode", "[mode]"),
    BuiltinCommand(
        "permissions",
        "The rules in force and where each comes from; add or remove one",
        "permissions",
        "[allow|ask|deny|remove [kind] RULE] [--local|--project|--user]",
    ),
    BuiltinCommand("todos", "The agent's todo list", "todos"),
    BuiltinCommand("cost", "Tokens and cost of this session so far", "cost"),
    BuiltinCommand("memory", "The instruction files loaded and from where", "memory"),
    BuiltinCommand(
        "status", "The session at a glance: model, mode, context, instructions", "status"
    ),
    BuiltinCommand("mcp", "The MCP servers: their state and tools", "mcp", needs_mcp=True),
    BuiltinCommand("sessions", "This project's sessions", "sessions"),
    BuiltinCommand("resume", "Pick an earlier session to carry on", "resume", "[id]"),
)

NOT_YET: frozenset[BuiltinAction] = frozenset()
"""Built-ins whose engine part is not in this build: they say so rather than pretend
(none now; kept so a built-in listed ahead of its engine part never pretends)."""

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]*")


@dataclass(frozen=True, slots=True)
class NotACommand:
    """Send the text as it is."""


@dataclass(frozen=True, slots=True)
class UnknownCommand:
    name: str


@dataclass(frozen=True, slots=True)
class RunBuiltin:
    command: BuiltinCommand
    arguments: str


@dataclass(frozen=True, slots=True)
class SendPrompt:
    """A custom command expanded: `prompt` goes to the model."""

    command: CustomCommand
    arguments: str
    prompt: str


Resolved = NotACommand | UnknownCommand | RunBuiltin | SendPrompt


class CommandPrompt(str):
    """A custom command's prompt that remembers what its front matter asked for: a `model`
    for its turn, and `narrowing`, its `allowed-tools` as a scope that refuses every call
    outside them during that turn (and grants nothing).

    A `str`, so the app's queue of prompts (and everything that joins or shows them) takes
    it unchanged; `LiveSession.send` reads the rest."""

    model: str | None
    narrowing: SkillScope | None
    typed: str
    """The line the person typed (`/review 12`): what goes back into the input when the
    prompt is held unsent, so it is run again as the command, never as its expansion."""

    command: CustomCommand | None
    """The command it came from: whose allowed-tools, scope and file prepare its parts."""
    parts: tuple[Part, ...]
    """The body as text, `@path` includes and !`cmd` runs (command_parts.py); with any of
    the last two, `LiveSession.send` reads and runs them first (command_prepare.py)."""

    def __new__(
        cls,
        text: str,
        model: str | None = None,
        narrowing: SkillScope | None = None,
        typed: str | None = None,
        command: CustomCommand | None = None,
        parts: tuple[Part, ...] = (),
    ) -> CommandPrompt:
        prompt = super().__new__(cls, text)
        prompt.model = model
        prompt.narrowing = narrowing
        prompt.typed = text if typed is None else typed
        prompt.command = command
        prompt.parts = parts
        return prompt


def narrowing_of(command: CustomCommand) -> SkillScope | None:
    """The command's `allowed-tools` as a scope for its turn; None when it lists none.
    The entries were checked when the file was read (command_files.py)."""
    if command.allowed_tools is None:
        return None
    source = f"command /{command.name}"
    rules = tuple(
        parse_rule(entry, "allow", source=source, path=command.path)
        for entry in command.allowed_tools
    )
    return SkillScope(f"/{command.name}", rules, command.path, kind="command")


@dataclass(slots=True)
class CommandRegistry:
    """The built-ins and the custom commands a session knows, by name."""

    custom: Sequence[CustomCommand] = ()
    has_mcp: bool = False
    complete: bool = True
    """False for the built-ins alone, while the project's commands are still being read."""
    _by_name: dict[str, Command] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for custom in self.custom:  # the first of a name wins: proctor's, user's, project
            self._by_name.setdefault(custom.name, custom)
            if custom.namespace:  # /frontend:build too, to tell two build.md apart
                self._by_name.setdefault(f"{custom.namespace}:{custom.name}", custom)
        for builtin in self.builtins:
            self._by_name[builtin.name] = builtin

    @property
    def builtins(self) -> tuple[BuiltinCommand, ...]:
        return tuple(b for b in BUILTINS if self.has_mcp or not b.needs_mcp)

    def shadowed(self) -> list[CustomCommand]:
        """Custom commands that a built-in of the same name hides."""
        names = {b.name for b in BUILTINS}
        return [c for c in self.custom if c.name in names]

    def find(self, name: str) -> Command | None:
        return self._by_name.get(name)

    def commands(self) -> list[Command]:
        """Every command once, built-ins first, each kind by name."""
        seen: list[Command] = [*self.builtins]
        for custom in sorted(self.custom, key=lambda c: c.name):
            if self._by_name.get(custom.name) is custom:
                seen.append(custom)
        return seen

    def matching(self, prefix: str) -> list[tuple[str, Command]]:
        """(name, command) for every name starting with `prefix`, in `commands()` order,
        then the namespaced names (`frontend:build`)."""
        plain = [(c.name, c) for c in self.commands()]
        aliases = [(n, c) for n, c in self._by_name.items() if (n, c) not in plain]
        return [
            (n, c)
            for n, c in [*plain, *sorted(aliases, key=lambda a: a[0])]
            if n.startswith(prefix)
        ]


def narrowed(state: AppState, scope: SkillScope) -> AppState:
    """`state` with `scope` narrowing what may run until the turn ends."""
    permissions = state.permission_context
    scopes = (*permissions.skill_scopes, scope)
    return state.with_permission_context(replace(permissions, skill_scopes=scopes))


def split_invocation(text: str) -> tuple[str, str] | None:
    """(`name`, `arguments`) when `text` is `/name args`; None when it is not a command."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped[1:2].isspace() or len(stripped) == 1:
        return None
    head, *rest = stripped[1:].split(maxsplit=1)  # any blank space ends the name
    if not _NAME.fullmatch(head):
        return None  # `/etc/hosts`, `//`: text, not a command
    return head, rest[0].strip() if rest else ""


def resolve(text: str, registry: CommandRegistry) -> Resolved:
    split = split_invocation(text)
    if split is None:
        return NotACommand()
    name, arguments = split
    command = registry.find(name)
    if command is None:
        return UnknownCommand(name)
    if isinstance(command, BuiltinCommand):
        return RunBuiltin(command, arguments)
    if command.frame is not None:
        # A skill run as /name: exactly the text the Skill tool gives the model (its
        # arguments filled into its instructions only); a skill's body has no runs or
        # includes, as when the model loads it.
        framed = command.frame[0] + expand(command.body, arguments) + command.frame[1]
        parts: tuple[Part, ...] = (Text(framed),)
    else:
        parts = command_parts(command.body, arguments)
    prompt = CommandPrompt(
        plain_text(parts), command.model, narrowing_of(command), text.strip(), command, parts
    )
    return SendPrompt(command, arguments, prompt)


def help_lines(registry: CommandRegistry) -> list[str]:
    """`/help`'s text: every command with its hint and what it does."""
    lines = []
    for command in registry.commands():
        hint = f" {command.argument_hint}" if command.argument_hint else ""
        lines.append(f"/{command.name}{hint} — {describe(command)}")
    return lines


def describe(command: Command) -> str:
    if isinstance(command, BuiltinCommand):
        return command.description + (" (not available yet)" if command.action in NOT_YET else "")
    text = command.description or first_line(command.body)
    return f"{text} ({command.label})"


def first_line(body: str, limit: int = 60) -> str:
    line = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def unknown_message(name: str, registry: CommandRegistry) -> str:
    close = [n for n, _ in registry.matching(name[:2])][:3] if name else []
    also = f" Did you mean {', '.join('/' + n for n in close)}?" if close else ""
    return f"There is no /{name} command; nothing was sent.{also} /help lists them."


def not_yet_message(command: BuiltinCommand) -> str:
    return f"/{command.name} is not available yet in this build of proctor; nothing was done."


def command_names(commands: Iterable[Command]) -> list[str]:
    return [c.name for c in commands]
