"""What the executor needs from the rest of the engine, bundled in one value.

The executor knows nothing of settings files, the model or the UI. It is handed a sink for
events, a permission chain, a hook runner, a port to ask a person (None when nobody can
answer, as in a headless run), the questions still open (`waiting`), and a store for
oversized results. Sub-agents get a copy with `parent_tool_use_id` set, so that every event
they cause nests under their Task call.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..access.decision import PermissionDecision
from ..events import EngineEvent, EventSink, null_sink
from ..hooks import HookRunner, PreToolUseOutcome
from ..permissions.decide import DecisionChain
from ..ports import PermissionAnswer, PermissionPort, PermissionRequest
from ..results import ResultStore
from .waiting import WaitingAsks

if TYPE_CHECKING:
    from ..tool import Tool, ToolContext

DEFAULT_MAX_TOOL_USE_CONCURRENCY = 10
CONCURRENCY_ENV = "PROCTOR_MAX_TOOL_USE_CONCURRENCY"

log = logging.getLogger(__name__)


def max_tool_use_concurrency() -> int:
    """`PROCTOR_MAX_TOOL_USE_CONCURRENCY`, default 10; a value that is not a positive
    integer is ignored with a warning rather than stopping the session."""
    raw = os.environ.get(CONCURRENCY_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_TOOL_USE_CONCURRENCY
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        log.warning(
            "%s=%r is not a positive integer; using %d",
            CONCURRENCY_ENV,
            raw,
            DEFAULT_MAX_TOOL_USE_CONCURRENCY,
        )
        return DEFAULT_MAX_TOOL_USE_CONCURRENCY
    return value


class PermissionChain(Protocol):
    """Decides a call after its PreToolUse hooks, and learns from the user's answers."""

    async def decide(
        self,
        tool: Tool[Any, Any],
        input: Any,
        context: ToolContext,
        hook: PreToolUseOutcome,
    ) -> PermissionDecision: ...

    async def record_answer(
        self, request: PermissionRequest, answer: PermissionAnswer, context: ToolContext
    ) -> None:
        """Keep what the user chose beyond this call (a session or settings-file rule)."""
        ...


@dataclass(frozen=True, slots=True)
class ExecutorServices:
    sink: EventSink = null_sink
    permissions: PermissionChain = field(default_factory=DecisionChain)
    hooks: HookRunner | None = None
    permission_port: PermissionPort | None = None
    results: ResultStore = field(default_factory=lambda: ResultStore(None))
    max_concurrency: int = field(default_factory=max_tool_use_concurrency)
    parent_tool_use_id: str | None = None
    agent_label: str | None = None
    waiting: WaitingAsks = field(default_factory=WaitingAsks)
    """The calls waiting for a person's answer, decided again when the mode changes; a
    sub-agent's copy of the services shares its session's."""

    def emit(self, event: EngineEvent) -> None:
        # A broken front end must not take a tool call down with it.
        try:
            self.sink(event)
        except Exception:
            log.exception("event sink failed on %s", type(event).__name__)
