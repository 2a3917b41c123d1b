"""The tool model: what a tool is, what it is given, and what it gives back.

A tool is a class with a pydantic input model (its JSON schema is what the model sees) and a
handful of questions the engine asks before running it: is it enabled, is this input
read-only, may it run beside others, what happens on interrupt. Every answer defaults to the
cautious one (not read-only, not concurrency-safe, ask), so a tool that says nothing about
itself is treated as dangerous rather than trusted.

The engine, not the tool, owns the call lifecycle (core/executor/lifecycle.py): a tool never
sees input that failed its schema, never runs without a permission decision, and may raise
freely from `call`, because the lifecycle turns any exception into an error result.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, NotRequired, TypedDict, TypeVar, overload

from pydantic import BaseModel, ConfigDict

from .abort import AbortController, AbortSignal
from .access.context import ToolPermissionContext
from .access.sandbox_policy import SandboxPolicy
from .access.targets import RuleTarget
from .app_state import AppState, AppStateStore, Updater
from .file_state import ReadFileState
from .session_services import SessionServices

if TYPE_CHECKING:
    from .events import EngineEvent, EventSink
    from .ports import ChangePreview, UserPort

_log = logging.getLogger(__name__)

DEFAULT_MAX_RESULT_SIZE_CHARS = 50_000
"""The global ceiling: no tool result above this size goes to the model inline."""

InterruptBehavior = Literal["cancel", "block"]
SubagentAccess = Literal["every", "general-purpose", "none"]


class ToolInput(BaseModel):
    """Base for input models: unknown fields are an error the model is told about."""

    model_config = ConfigDict(extra="forbid")


InputT = TypeVar("InputT", bound=BaseModel)
OutputT = TypeVar("OutputT")

ToolContent = str | list[dict[str, Any]]
"""A tool_result's content: text, or content blocks (text, image, document)."""


class ToolResultBlock(TypedDict):
    """An API `tool_result` content block, as sent back to the model."""

    type: Literal["tool_result"]
    tool_use_id: str
    content: ToolContent
    is_error: NotRequired[bool]


@dataclass(frozen=True, slots=True)
class ValidationResult:
    ok: bool
    message: str = ""
    error_code: int | None = None

    @classmethod
    def passed(cls) -> ValidationResult:
        return _PASSED

    @classmethod
    def failed(cls, message: str, error_code: int | None = None) -> ValidationResult:
        return cls(False, message, error_code)


_PASSED = ValidationResult(True)


@dataclass(frozen=True, slots=True)
class PermissionResult:
    """A tool's own view of a call, the input to the decision chain (not the decision).

    `passthrough` means "nothing to say": the rules and the mode decide.
    """

    behavior: Literal["allow", "ask", "deny", "passthrough"]
    message: str = ""
    updated_input: Mapping[str, Any] | None = None
    suggestions: tuple[str, ...] = ()
    """Rules (`Bash(npm test:*)`) that would allow this call if the user chose to keep them."""


PASSTHROUGH = PermissionResult("passthrough")

Progress = Callable[[Any], None]


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """Session-wide settings a tool may consult; replaced, never mutated."""

    tools: ToolPool | None = None
    model: str = ""
    discovered_tools: frozenset[str] = frozenset()
    """Deferred tools whose schema the model has loaded through ToolSearch."""
    session_dir: Path | None = None
    user_port: UserPort | None = None
    """Where questions and plans go to a person; None when nobody can answer (headless)."""
    events: EventSink | None = None
    """The session's one event sink, for tools whose effect the front end shows beyond the
    call itself (todos, mode)."""
    services: SessionServices = field(default_factory=SessionServices)
    """The session's shells, sub-agents and sandbox (core/session_services.py). Copies of
    these options share it: every call and sub-agent of one session sees the same."""


@dataclass(frozen=True)
class ToolContext:
    """Everything a tool call may know about the session it runs in.

    The executor gives each call its own copy with its own `abort` signal and `tool_use_id`;
    shared mutable things (app state, read-file state) are shared objects on purpose.
    """

    cwd: Path
    app_state: AppStateStore = field(default_factory=AppStateStore)
    read_file_state: ReadFileState = field(default_factory=ReadFileState)
    abort: AbortSignal = field(default_factory=lambda: AbortController().signal)
    messages: Sequence[Mapping[str, Any]] = ()
    options: ToolOptions = field(default_factory=ToolOptions)
    tool_use_id: str = ""
    agent_id: str | None = None
    """Set inside a sub-agent: the parent's tool_use_id for its Task call."""
    agent_label: str | None = None
    """Set inside a sub-agent: which one, in words (`Explore agent: find the tests`), as its
    permission questions and the audit log name it."""
    sandbox: SandboxPolicy | None = None
    """The sandbox policy the decision chose for this call (sandboxable tools only). The
    executor sets it from the decision; None only for calls made outside the executor."""

    @property
    def permission_context(self) -> ToolPermissionContext:
        # Read live from the store: a mode switch applies to the very next decision.
        return self.app_state.get().permission_context

    @property
    def additional_working_directories(self) -> tuple[Path, ...]:
        return self.permission_context.additional_working_directories

    def get_app_state(self) -> AppState:
        return self.app_state.get()

    def set_app_state(self, updater: Updater) -> AppState:
        return self.app_state.set(updater)

    def replace(self, **changes: Any) -> ToolContext:
        return replace(self, **changes)

    def emit(self, event: EngineEvent) -> None:
        """Send `event` to the session's sink, if there is one; a failing sink never fails
        the call (TodoWrite's and the plan tools' state changes go this way)."""
        sink = self.options.events
        if sink is None:
            return
        try:
            sink(event)
        except Exception:
            _log.exception("event sink failed on %s", type(event).__name__)

    def for_call(self, tool_use_id: str, abort: AbortSignal) -> ToolContext:
        """This context for one call: its own id and abort signal, everything else shared.

        The executor does this for every call, so it copies the instance dict directly
        (`dataclasses.replace` re-runs `__init__`, which costs more than the rest of a no-op
        call's bookkeeping). That is also why ToolContext has no `__slots__`."""
        clone = object.__new__(ToolContext)
        fields = clone.__dict__
        fields.update(self.__dict__)
        fields["tool_use_id"] = tool_use_id
        fields["abort"] = abort
        return clone


ContextModifier = Callable[[ToolContext], ToolContext]


@dataclass(slots=True)
class ToolResult(Generic[OutputT]):
    """What `Tool.call` returns: the tool's typed output, or a message in plain text (an
    expected failure, with `is_error`). The tool renders output for the model
    (`Tool.render`); front ends get it as it is (`ToolCompleted.output`).

    A value: build a new one rather than changing it (not `frozen` only because every call
    makes one, and frozen dataclasses cost three times as much to build)."""

    data: OutputT | str
    is_error: bool = False
    new_messages: tuple[Mapping[str, Any], ...] = ()
    context_modifier: ContextModifier | None = None
    """Applied to the context of later calls (for an unsafe tool, before the next one starts)."""
    saved: SavedOutput | None = None
    """Output the tool saved to disk itself (Bash's spool): announced like a result the
    engine persisted, so front ends learn of both the same way."""


def failure(message: str) -> ToolResult[Any]:
    """An expected problem, as the result of `call`: the message, marked as an error."""
    return ToolResult(message, is_error=True)


@dataclass(frozen=True, slots=True)
class SavedOutput:
    path: Path
    size_bytes: int


class Tool(Generic[InputT, OutputT]):
    """Base class of every tool: `Tool[Input, Output]` takes an input model and gives typed
    output. Subclasses set the attributes, implement `call` and, for output that is not
    text already, `render` it for the model."""

    name: str
    aliases: tuple[str, ...] = ()
    search_hint: str = ""
    """Three to ten words ToolSearch matches against when the tool is deferred."""
    input_model: type[InputT]
    description: str = ""
    """One line for people: the UI, ToolSearch results, `proctor check`."""
    instructions: str = ""
    """What the model reads about the tool (its API description), when longer than a line."""
    interrupt_behavior: InterruptBehavior = "block"
    max_result_size_chars: float = DEFAULT_MAX_RESULT_SIZE_CHARS
    """Results above min(this, 50,000) are saved to disk; math.inf means never."""
    should_defer: bool = False
    always_load: bool = False
    is_mcp: bool = False
    cancels_siblings_on_error: bool = False
    """A failing call cancels the other such calls of its turn (shell commands chain)."""
    headline_field: str | None = None
    """The input field that says most about a call (a command, a path), which front ends
    show above the rest of the input; None shows the input as it is."""
    subagents: SubagentAccess = "general-purpose"
    """Which sub-agents get the tool: "every" (Explore and Plan too: it reads, or asks),
    "general-purpose" only, or "none" (it belongs to the person's session)."""
    sandboxable: bool = False
    """Runs commands the kernel sandbox can fence (Bash): the decision chain then chooses a
    sandbox policy, and `ToolContext.sandbox` carries it into `call`."""

    def prompt(self, options: ToolOptions) -> str:
        """The description the model reads: `instructions`, else the one-line description.
        Override only when the text depends on the session's options."""
        return self.instructions or self.description

    def is_enabled(self) -> bool:
        return True

    def is_read_only(self, input: InputT) -> bool:
        return False

    def is_concurrency_safe(self, input: InputT) -> bool:
        return False

    def shell_directory(self, context: ToolContext) -> Path | None:
        """Where a command of this tool would start, for a tool whose shell keeps its
        directory between calls (None: the project directory)."""
        return None

    def rule_target(self, input: InputT, cwd: Path) -> RuleTarget | None:
        """What rule specifiers match for this call: its command, path or domain.

        None (the default) means specifier rules (`Tool(x)`) cannot tell this call apart;
        deny and ask rules with a specifier for this tool then ask rather than guess."""
        return None

    def parse_input(self, raw: Any) -> InputT:
        """Schema validation; raises pydantic.ValidationError."""
        return self.input_model.model_validate(raw)

    def input_json_schema(self) -> dict[str, Any]:
        return _json_schema(self.input_model)

    def summarize_input(self, input: InputT) -> str:
        """A short, single-line summary of the call for lists and headers: the first text
        field given, else the given fields as JSON (nested models included)."""
        given = input.model_fields_set
        for name, value in input.__dict__.items():
            if name in given and isinstance(value, str) and value.strip():
                return shorten(value, 80)
        if not given:
            return ""
        dumped = input.model_dump_json(include=given, by_alias=True)
        return shorten(dumped, 80)

    async def validate_input(self, input: InputT, context: ToolContext) -> ValidationResult:
        return ValidationResult.passed()

    async def check_permissions(self, input: InputT, context: ToolContext) -> PermissionResult:
        return PASSTHROUGH

    async def call(
        self, input: InputT, context: ToolContext, progress: Progress
    ) -> ToolResult[OutputT]:
        raise NotImplementedError(f"{type(self).__name__} does not implement call()")

    def render(self, output: OutputT) -> ToolContent:
        """What the model reads for this tool's output: text, or content blocks (an image).
        The one mapping a tool writes; the default shows data as JSON."""
        return content_of(output)

    def result_block(self, result: ToolResult[OutputT], tool_use_id: str) -> ToolResultBlock:
        """The tool_result block the model gets for `result` (seed 000's
        mapToolResultToToolResultBlockParam). Tools do not override it: they say what
        differs in `render`. Plain text passes as it is; an error in plain text is marked
        `<tool_use_error>`, as the lifecycle marks the errors of its own stages."""
        data = result.data
        if isinstance(data, str):
            content: ToolContent = (
                f"<tool_use_error>{data}</tool_use_error>" if result.is_error else data
            )
        else:
            content = self.render(data)
        block: ToolResultBlock = {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": content,
        }
        if result.is_error:
            block["is_error"] = True
        return block

    def change_preview(self, input: InputT, cwd: Path) -> ChangePreview | None:
        """For a tool that edits files: the diff the call would make, shown when it asks.
        Runs on a worker thread (it may read the file); None for other tools."""
        return None

    def hook_response(self, input: InputT, data: OutputT | str) -> Any:
        """The `tool_response` a PostToolUse hook reads. Tools whose results hooks written for
        the seeds' system inspect (Bash, Write, Edit, TodoWrite) give that system's shape;
        the rest give their result data as it is."""
        return data

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


@cache
def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


def content_of(data: Any) -> ToolContent:
    """Default mapping of a result's data to tool_result content."""
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    if isinstance(data, BaseModel):
        return data.model_dump_json()
    if isinstance(data, list) and all(isinstance(b, dict) and "type" in b for b in data):
        return data
    return json.dumps(data, ensure_ascii=False, default=str)


def shorten(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


AnyTool = Tool[Any, Any]


class ToolPool(Sequence[AnyTool]):
    """An ordered, immutable list of tools with lookup by name or alias.

    A pool is wrapped, never edited: `filtered` narrows it (a sub-agent's tools),
    `extended` adds tools after it (an MCP server's), each giving a new pool, so whoever
    holds a pool knows it will not change under them."""

    __slots__ = ("_by_name", "_tools")

    def __init__(self, tools: Iterable[AnyTool] = ()) -> None:
        self._tools = tuple(tools)
        self._by_name: dict[str, AnyTool] = {}
        # Names first so that an alias never shadows another tool's real name.
        for tool in self._tools:
            self._by_name.setdefault(tool.name, tool)
        for tool in self._tools:
            for alias in tool.aliases:
                self._by_name.setdefault(alias, tool)

    def find(self, name: str) -> AnyTool | None:
        """The tool called `name`, or the one that has `name` as an alias."""
        return self._by_name.get(name)

    def filtered(self, keep: Callable[[AnyTool], bool]) -> ToolPool:
        """The tools `keep` says yes to, in this pool's order."""
        return ToolPool(tool for tool in self._tools if keep(tool))

    def extended(self, tools: Iterable[AnyTool]) -> ToolPool:
        """This pool, then `tools` whose names it does not have yet (its own win), so the
        pool's prefix, and the prompt cache built on it, stays as it was."""
        seen = {tool.name for tool in self._tools}
        added = []
        for tool in tools:
            if tool.name not in seen:
                seen.add(tool.name)
                added.append(tool)
        return ToolPool((*self._tools, *added))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self._tools)

    def deferred(self) -> tuple[AnyTool, ...]:
        """Tools the model sees by name only until it loads them through ToolSearch."""
        return tuple(t for t in self._tools if t.should_defer and not t.always_load)

    @overload
    def __getitem__(self, index: int) -> AnyTool: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[AnyTool]: ...
    def __getitem__(self, index: int | slice) -> AnyTool | Sequence[AnyTool]:
        return self._tools[index]

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[AnyTool]:
        return iter(self._tools)

    def __repr__(self) -> str:
        return f"ToolPool({list(self.names)})"
