"""The calls waiting for a person's answer, so that a change of mode can decide them again.

A person who presses shift+tab while a dialog waits means the new mode for the call on
screen too, not only for the next one. So every call that asks registers here while its
question is open, and when the mode changes (`ModeChanged`, whoever changed it: the mode key,
plan mode entered or approved) each one is run through the real permission chain again,
under the context as it is now (its PreToolUse hooks too, since they see the mode):

- allowed or denied: the question is settled with that decision and withdrawn (its dialog
  closes), and the call goes on or ends as the chain said;
- asked again, or the chain failed: the question stays open. Fail closed: only the chain can
  turn a question into an answer, never this module.
- the mode changed again while the chain was deciding: that decision is about a mode already
  left, so it settles nothing; the newer round of decisions speaks for the mode now.

The lifecycle (`lifecycle.py`) owns the question; this registry only hands it a decision.
It is shared by a session and its sub-agents (it rides on `ExecutorServices`), and the
session's sink tells it when the mode changed (`redeciding_on_mode_change`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..access.decision import Allow, Deny, PermissionDecision
from ..events import EngineEvent, EventSink, ModeChanged, SubAgentEvent
from ..ports import PermissionAnswer

log = logging.getLogger(__name__)

Settled = Allow | Deny
Redecide = Callable[[], Awaitable[PermissionDecision]]


@dataclass(eq=False, slots=True)
class _Waiting:
    redecide: Redecide
    settled: asyncio.Future[Settled]


class WaitingAsks:
    """Calls whose question is open, by tool_use_id, in the order they asked."""

    def __init__(self) -> None:
        self._waiting: dict[str, _Waiting] = {}
        self._tasks: set[asyncio.Task[int]] = set()
        self._round = 0
        """Counts rounds of re-decision: a round outrun by a newer one settles nothing more."""

    def __len__(self) -> int:
        return len(self._waiting)

    def add(self, tool_use_id: str, redecide: Redecide) -> asyncio.Future[Settled]:
        """A call's question is open; the future resolves if a re-decision settles it."""
        settled: asyncio.Future[Settled] = asyncio.get_running_loop().create_future()
        self._waiting[tool_use_id] = _Waiting(redecide, settled)
        return settled

    def remove(self, tool_use_id: str) -> None:
        """The question is closed (answered, settled, or the call was cancelled)."""
        waiting = self._waiting.pop(tool_use_id, None)
        if waiting is not None and not waiting.settled.done():
            waiting.settled.cancel()

    async def redecide_waiting(self) -> int:
        """Decide every open question again; returns how many it settled."""
        settled = 0
        self._round += 1
        this_round = self._round
        for tool_use_id, waiting in list(self._waiting.items()):
            if waiting.settled.done():
                continue
            try:
                decision = await waiting.redecide()
            except Exception:  # the question stays: only a real decision may answer it
                log.exception("deciding %s again failed; it still asks", tool_use_id)
                continue
            if this_round != self._round:  # the mode changed again meanwhile: decided stale
                break
            if isinstance(decision, Allow | Deny) and not waiting.settled.done():
                waiting.settled.set_result(decision)
                settled += 1
        return settled

    async def answer_or_settled(
        self, tool_use_id: str, ask: Awaitable[PermissionAnswer], redecide: Redecide
    ) -> PermissionAnswer | Settled:
        """The person's answer to `ask`, or the decision that settled the question first.

        The question is withdrawn (`ask` cancelled, so its dialog closes) as soon as either
        comes, and when the call itself is cancelled. A port that fails raises here."""
        asking = asyncio.ensure_future(ask)
        settled = self.add(tool_use_id, redecide)
        try:
            await asyncio.wait((asking, settled), return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.remove(tool_use_id)
            if not asking.done():
                asking.cancel()
                await asyncio.wait((asking,))  # withdrawn (its dialog closed) before going on
        if asking.done() and not asking.cancelled():
            return asking.result()  # the person's own answer wins a tie
        if settled.done() and not settled.cancelled():
            return settled.result()
        return asking.result()  # the port was cancelled from elsewhere: so is this call

    async def decided(self) -> None:
        """Return once every round of decisions set off so far has finished."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))

    def redecide_soon(self) -> None:
        """Decide the open questions again on the next turn of the loop (callable from a
        sink, which must not wait)."""
        if not self._waiting:
            return
        self._round += 1  # now, not when the task starts: a round under way is already stale
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop, so nothing can be waiting on one
            return
        task = loop.create_task(self.redecide_waiting())
        self._tasks.add(task)  # held until done: the loop keeps only weak references
        task.add_done_callback(self._tasks.discard)


def redeciding_on_mode_change(sink: EventSink, waiting: WaitingAsks) -> EventSink:
    """`sink`, which also has `waiting` decide its open questions again once the mode has
    changed (the event is passed on first, so the change is on record before its effects)."""

    def redeciding(event: EngineEvent) -> None:
        try:
            sink(event)
        finally:
            changed = event.event if isinstance(event, SubAgentEvent) else event
            if isinstance(changed, ModeChanged):
                waiting.redecide_soon()

    return redeciding
