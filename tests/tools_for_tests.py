"""Tools written for the tests: real `Tool` subclasses whose behaviour the input dictates.

`Sleep` waits, may fail, report progress and claim to be safe or not; `Shell` is the same but
behaves like Bash does for the executor (a failure cancels sibling shells; Esc cancels it).
A `Tracker` shared by all of them records how many are inside `call` at once, so tests can
check the executor's promises from the tools' side as well as from its events.

A call that must still be running when something else happens is `hold`: it waits until
the test releases it (`Tracker.release`), not for a time a busy machine may overrun.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from core.tool import Tool, ToolContext, ToolInput, ToolResult


@dataclass
class Tracker:
    inside: int = 0
    unsafe_inside: int = 0
    max_inside: int = 0
    overlaps_with_unsafe: int = 0
    entered: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    gates: dict[str, asyncio.Event] = field(default_factory=dict)

    def gate(self, tool_use_id: str) -> asyncio.Event:
        return self.gates.setdefault(tool_use_id, asyncio.Event())

    def release(self, *tool_use_ids: str) -> None:
        """Let these `hold` calls finish (now, or at once when they get there)."""
        for tool_use_id in tool_use_ids:
            self.gate(tool_use_id).set()

    def enter(self, tool_use_id: str, safe: bool) -> None:
        if self.unsafe_inside or (not safe and self.inside):
            self.overlaps_with_unsafe += 1
        self.inside += 1
        self.unsafe_inside += 0 if safe else 1
        self.max_inside = max(self.max_inside, self.inside)
        self.entered.append(tool_use_id)

    def leave(self, tool_use_id: str, safe: bool) -> None:
        self.inside -= 1
        self.unsafe_inside -= 0 if safe else 1


class SleepInput(ToolInput):
    ms: int = Field(default=0, ge=0)
    hold: bool = False
    """Wait until the tracker releases this call."""
    safe: bool = True
    fail: bool = False
    raise_error: bool = False
    progress: int = 0
    output: str = "done"
    read_only: bool = True


class Sleep(Tool[SleepInput, Any]):
    name = "Sleep"
    aliases = ("Nap",)
    search_hint = "wait for a while"
    input_model = SleepInput
    description = "Waits, then answers."

    def __init__(self, tracker: Tracker | None = None, name: str | None = None) -> None:
        self.tracker = tracker or Tracker()
        if name:
            self.name = name

    def is_concurrency_safe(self, input: SleepInput) -> bool:
        return input.safe

    def is_read_only(self, input: SleepInput) -> bool:
        return input.read_only

    async def call(self, input: SleepInput, context: ToolContext, progress: Any) -> ToolResult:
        self.tracker.enter(context.tool_use_id, input.safe)
        try:
            for step in range(input.progress):
                progress({"step": step})
                await asyncio.sleep(0)
            if input.hold:
                await self.tracker.gate(context.tool_use_id).wait()
            if input.ms:
                await asyncio.sleep(input.ms / 1000)
            if input.raise_error:
                raise RuntimeError("the tool broke")
            self.tracker.finished.append(context.tool_use_id)
            return ToolResult(input.output, is_error=input.fail)
        except asyncio.CancelledError:
            self.tracker.cancelled.append(context.tool_use_id)
            raise
        finally:
            self.tracker.leave(context.tool_use_id, input.safe)


class Shell(Sleep):
    name = "Bash"
    interrupt_behavior = "cancel"
    cancels_siblings_on_error = True


class Unbounded(Sleep):
    name = "Reader"
    max_result_size_chars = math.inf


class Small(Sleep):
    name = "Small"
    max_result_size_chars = 100
