"""Building an engine for a test: a tool pool, a context, services and scripted ports."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.abort import AbortController
from core.access.context import ToolPermissionContext
from core.app_state import AppState, AppStateStore
from core.events import EventRecorder, ToolEvent
from core.executor import ExecutorServices, ResultUpdate, ToolCall, ToolCallOutcome
from core.hooks import HookCall, PostToolUseOutcome, PreToolUseOutcome
from core.ports import Approve, PermissionAnswer, PermissionRequest
from core.results import ResultStore
from core.session_services import SessionServices
from core.tool import Tool, ToolContext, ToolOptions, ToolPool

HANG_BOUND_S = 30.0
"""How long a test waits for something that happens at once on an idle machine: only so that
a broken test fails instead of hanging, never a speed check. A loaded machine stays far inside
it."""


async def eventually(condition: Callable[[], object], what: str) -> None:
    """Wait until `condition()` holds, checking it between turns of the event loop."""
    give_up = time.monotonic() + HANG_BOUND_S
    while not condition():
        if time.monotonic() > give_up:
            raise AssertionError(f"{what} never happened")
        await asyncio.sleep(0.005)


class LoopClock:
    """The running event loop's clock, which the test moves forward. A timeout under test is
    set long (real time never reaches it) and made to expire by `advance` once the test has
    seen it armed and everything it needs happen first, however slowly the machine gets
    there. (Advanced before the timeout is armed, the clock only moves the deadline along.)"""

    def __init__(self, monkeypatch: Any) -> None:
        loop = asyncio.get_running_loop()
        real = loop.time
        self.ahead = 0.0
        monkeypatch.setattr(loop, "time", lambda: real() + self.ahead)

    def advance(self, seconds: float) -> None:
        self.ahead += seconds


def make_context(
    tools: Iterable[Tool[Any, Any]],
    cwd: Path = Path("/tmp"),
    *,
    permission_context: ToolPermissionContext | None = None,
    abort: AbortController | None = None,
    discovered: frozenset[str] = frozenset(),
) -> ToolContext:
    store = AppStateStore(
        AppState(permission_context=permission_context or ToolPermissionContext())
    )
    options = ToolOptions(tools=ToolPool(tools), discovered_tools=discovered)
    OPENED.append(options.services)
    return ToolContext(
        cwd=cwd, app_state=store, abort=(abort or AbortController()).signal, options=options
    )


OPENED: list[SessionServices] = []
"""The services of every session the helpers made; `close_sessions` closes them."""


async def close_sessions() -> None:
    """End every helper-made session: background shells stop, temporary files go."""
    while OPENED:
        await OPENED.pop().close()


@dataclass
class ScriptedPort:
    """Answers permission requests from a list (Approve once when it runs out)."""

    answers: list[PermissionAnswer] = field(default_factory=list)
    requests: list[PermissionRequest] = field(default_factory=list)

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else Approve()


@dataclass
class ScriptedHooks:
    pre: PreToolUseOutcome = field(default_factory=PreToolUseOutcome)
    post: PostToolUseOutcome = field(default_factory=PostToolUseOutcome)
    raise_in: str = ""
    seen: list[tuple[str, Any]] = field(default_factory=list)

    async def pre_tool_use(self, call: HookCall) -> PreToolUseOutcome:
        self.seen.append(("pre", call))
        if self.raise_in == "pre":
            raise RuntimeError("hook exploded")
        return self.pre

    async def post_tool_use(self, call: HookCall, response: Any) -> PostToolUseOutcome:
        self.seen.append(("post", response))
        if self.raise_in == "post":
            raise RuntimeError("hook exploded")
        return self.post

    async def post_tool_use_failure(self, call: HookCall, error: str) -> PostToolUseOutcome:
        self.seen.append(("failure", error))
        return self.post


def make_services(
    recorder: EventRecorder | None = None, session_dir: Path | None = None, **changes: Any
) -> ExecutorServices:
    changes.setdefault("sink", recorder if recorder is not None else EventRecorder())
    return ExecutorServices(results=ResultStore(session_dir), **changes)


def calls(*specs: tuple[str, dict[str, Any]]) -> list[ToolCall]:
    return [ToolCall(f"toolu_{i:03d}", name, spec) for i, (name, spec) in enumerate(specs)]


def outcomes_of(updates: Sequence[Any]) -> list[ToolCallOutcome]:
    return [u.outcome for u in updates if isinstance(u, ResultUpdate)]


def text_of(outcome: ToolCallOutcome) -> str:
    content = outcome.block["content"]
    assert isinstance(content, str)
    return content


def terminal_kinds(recorder: EventRecorder, tool_use_id: str) -> list[str]:
    return [k for k in recorder.kinds(tool_use_id) if k in ("completed", "cancelled")]


def executing_violations(events: Sequence[Any], cap: int) -> list[str]:
    """Replay the event stream and report every breach of the start rule and the cap."""
    running: dict[str, bool] = {}
    safe_of: dict[str, bool] = {}
    problems = []
    for event in events:
        if not isinstance(event, ToolEvent):
            continue
        if event.kind == "queued":
            safe_of[event.tool_use_id] = event.concurrency_safe  # type: ignore[attr-defined]
        elif event.kind == "started":
            safe = safe_of[event.tool_use_id]
            if running and (not safe or not all(running.values())):
                problems.append(f"{event.tool_use_id} started beside {sorted(running)}")
            running[event.tool_use_id] = safe
            if len(running) > cap:
                problems.append(f"{len(running)} running at once, cap {cap}")
        elif event.kind in ("completed", "cancelled"):
            running.pop(event.tool_use_id, None)
    return problems


def hold_process_starts(monkeypatch: Any, factory: str) -> asyncio.Event:
    """Make `asyncio.<factory>` ("create_subprocess_exec" or "_shell") start the process at
    once but hand it back only once the returned event is set: the window a cancel lands in
    on a busy machine, held open for as long as the test needs."""
    create = getattr(asyncio, factory)
    release = asyncio.Event()

    async def held(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        process = await create(*args, **kwargs)
        await release.wait()
        return process

    monkeypatch.setattr(asyncio, factory, held)
    return release
