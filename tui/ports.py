"""The app's answers to the engine's questions: one modal dialog at a time, in order.

The dialogs' modules are imported when first needed, not with the app: the first frame
should not wait for screens nobody has asked for yet.

The engine awaits `request_permission`, `ask_questions` and `review_plan` (core/ports.py)
from inside a running turn, possibly several at once: parallel calls can each need an
approval. Each question becomes a pending item with its own future; the first is shown,
the rest wait their turn, and a permission dialog says "1 of N" and offers "allow all N"
while others wait. Other calls keep running meanwhile: only the asking call awaits.

If the engine stops waiting (the turn was interrupted, a sibling failed), the item is
withdrawn and, if it is on screen, its dialog closes. A dialog that cannot be shown counts
as "no" (the port protocol's fail-closed rule).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from textual.app import App
from textual.screen import ModalScreen

from core.ports import (
    Answers,
    Approve,
    KeepPlanning,
    PermissionAnswer,
    PermissionRequest,
    PlanAnswer,
    PlanRequest,
    QuestionRequest,
    Reject,
)

DialogKind = Literal["permission", "plan", "question"]


@dataclass(eq=False, slots=True)
class _Pending:
    kind: DialogKind
    make: Callable[[int], ModalScreen[Any]]
    """Builds the dialog, given how many permission requests wait (for "1 of N")."""
    future: asyncio.Future[Any]
    screen: ModalScreen[Any] | None = None


class DialogPorts:
    """Implements core.ports.PermissionPort and UserPort with modal screens."""

    def __init__(self, app: App[Any], cwd: Path) -> None:
        self.app = app
        self.cwd = cwd
        self._queue: deque[_Pending] = deque()
        self._showing: _Pending | None = None
        self._push_scheduled = False

    # -- the ports -----------------------------------------------------------------------------

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        from .screens.permission import PermissionScreen

        answer = await self._ask(
            "permission",
            lambda waiting: PermissionScreen(request, cwd=self.cwd, waiting=waiting),
            default=Reject(),
        )
        return answer if isinstance(answer, Approve | Reject) else Reject()

    async def ask_questions(self, request: QuestionRequest) -> Answers | None:
        from .screens.question import QuestionScreen

        answer = await self._ask("question", lambda _: QuestionScreen(request), default=None)
        return answer if isinstance(answer, Answers) else None

    async def review_plan(self, request: PlanRequest) -> PlanAnswer:
        from .screens.plan import PlanScreen

        answer = await self._ask("plan", lambda _: PlanScreen(request), default=KeepPlanning())
        return answer if answer is not None else KeepPlanning()

    # -- what the screen shows -----------------------------------------------------------------

    @property
    def waiting_permissions(self) -> int:
        """Permission requests not yet answered, the one on screen included."""
        return sum(item.kind == "permission" for item in self._items())

    def _items(self) -> list[_Pending]:
        return ([self._showing] if self._showing else []) + list(self._queue)

    async def _ask(
        self, kind: DialogKind, make: Callable[[int], ModalScreen[Any]], default: Any
    ) -> Any:
        item = _Pending(kind, make, asyncio.get_running_loop().create_future())
        self._queue.append(item)
        self._show_next()
        self._update_count()
        try:
            return await item.future
        except asyncio.CancelledError:
            self._withdraw(item)
            raise
        except Exception:  # a dialog that broke answers "no"
            return default

    def _show_next(self) -> None:
        """Show the next dialog on the next turn of the message loop, not now: the engine
        often withdraws several requests in one go (an interrupt), and a dialog pushed
        between two withdrawals would be closed before it was even built."""
        if self._showing is None and self._queue and not self._push_scheduled:
            self._push_scheduled = True
            self.app.call_later(self._push_next)

    def _push_next(self) -> None:
        self._push_scheduled = False
        if self._showing is not None:
            return
        while self._queue and self._queue[0].future.done():
            self._queue.popleft()  # withdrawn meanwhile
        if not self._queue:
            return
        item = self._showing = self._queue.popleft()
        try:
            item.screen = item.make(self.waiting_permissions)
            self.app.push_screen(item.screen, callback=lambda result: self._answered(item, result))
        except Exception as error:
            self._showing = None
            if not item.future.done():
                item.future.set_exception(error)
            self._show_next()
        self._update_count()

    def _answered(self, item: _Pending, result: Any) -> None:
        if self._showing is item:
            self._showing = None
        from .screens.permission import ApproveAll

        if item.future.done():
            # The engine stopped waiting while this dialog was covered by another screen:
            # its answer, "allow all" above all, must not reach requests it never showed.
            if result is not None:
                self.app.notify("That call no longer waits for an answer.", severity="warning")
        elif isinstance(result, ApproveAll):
            result = Approve()
            for other in [i for i in self._queue if i.kind == "permission"]:
                self._queue.remove(other)
                if not other.future.done():
                    other.future.set_result(Approve())
        if not item.future.done():
            item.future.set_result(result)
        self._show_next()
        self._update_count()

    def _withdraw(self, item: _Pending) -> None:
        if item in self._queue:
            self._queue.remove(item)
        elif self._showing is item:
            self._showing = None
            screen = item.screen
            # A dialog under another screen (the output viewer) closes when the user
            # comes back to it; its answer is then ignored.
            if screen is not None and self.app.screen is screen and screen.is_mounted:
                screen.dismiss(None)
            self._show_next()
        self._update_count()

    def _update_count(self) -> None:
        from .screens.permission import PermissionScreen

        showing = self._showing
        if showing is not None and isinstance(showing.screen, PermissionScreen):
            try:
                showing.screen.set_waiting(self.waiting_permissions)
            except Exception as error:  # a count not redrawn must not fail the question
                self.app.log.error(f"could not update the waiting count: {error!r}")
