"""The app's answers to the engine: one dialog at a time, "1 of N", allow all, withdrawal."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from engine_helpers import HANG_BOUND_S
from textual.app import App

from core.access.decision import DecidedBy
from core.ports import Approve, KeepPlanning, PermissionRequest, PlanRequest, Reject
from tui.ports import DialogPorts
from tui.screens.permission import PermissionScreen
from tui.screens.plan import PlanScreen
from tui.theme_vars import THEME_VARIABLE_DEFAULTS


class Host(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)


def request(n: int) -> PermissionRequest:
    return PermissionRequest(
        tool_use_id=f"t{n}",
        tool_name="Bash",
        input={"command": f"touch {n}.txt"},
        summary=f"touch {n}.txt",
        message="not read-only",
        decided_by=DecidedBy("analysis", "not read-only"),
        suggestions=(f"Bash(touch {n}.txt:*)",),
    )


async def settle(pilot, condition) -> None:
    """Let the app run until `condition()` holds (bounded only against a hang)."""
    give_up = time.monotonic() + HANG_BOUND_S
    while not condition():
        if time.monotonic() > give_up:
            raise AssertionError("the app never got there")
        await pilot.pause()


async def test_requests_wait_their_turn_and_each_gets_its_own_answer(tmp_path: Path):
    app = Host()
    async with app.run_test() as pilot:
        ports = DialogPorts(app, tmp_path)
        first = asyncio.ensure_future(ports.request_permission(request(1)))
        second = asyncio.ensure_future(ports.request_permission(request(2)))
        await settle(pilot, lambda: isinstance(app.screen, PermissionScreen))
        assert ports.waiting_permissions == 2
        assert app.screen.request.tool_use_id == "t1"
        await pilot.press("y")
        assert await first == Approve()
        await settle(pilot, lambda: getattr(app.screen, "request", None) == request(2))
        await pilot.press("escape")
        assert await second == Reject()
        assert ports.waiting_permissions == 0


async def test_allow_all_answers_every_waiting_permission_but_not_a_plan(tmp_path: Path):
    app = Host()
    async with app.run_test() as pilot:
        ports = DialogPorts(app, tmp_path)
        asks = [asyncio.ensure_future(ports.request_permission(request(n))) for n in range(3)]
        plan = asyncio.ensure_future(
            ports.review_plan(PlanRequest("p", "# Plan", tmp_path / "plan.md"))
        )
        await settle(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("A")
        assert [await ask for ask in asks] == [Approve()] * 3
        await settle(pilot, lambda: isinstance(app.screen, PlanScreen))
        await pilot.press("escape")
        assert await plan == KeepPlanning("")


async def test_a_request_the_engine_stops_waiting_for_closes_its_dialog(tmp_path: Path):
    app = Host()
    async with app.run_test() as pilot:
        ports = DialogPorts(app, tmp_path)
        shown = asyncio.ensure_future(ports.request_permission(request(1)))
        queued = asyncio.ensure_future(ports.request_permission(request(2)))
        await settle(pilot, lambda: isinstance(app.screen, PermissionScreen))
        queued.cancel()  # a sibling failed: the engine no longer waits for this one
        await settle(pilot, lambda: ports.waiting_permissions == 1)
        shown.cancel()  # the turn was interrupted
        await settle(pilot, lambda: not isinstance(app.screen, PermissionScreen))
        assert ports.waiting_permissions == 0


async def test_withdrawing_every_waiting_request_at_once_leaves_no_dialog(tmp_path: Path):
    app = Host()
    async with app.run_test() as pilot:
        ports = DialogPorts(app, tmp_path)
        asks = [asyncio.ensure_future(ports.request_permission(request(n))) for n in range(3)]
        await settle(pilot, lambda: isinstance(app.screen, PermissionScreen))
        for ask in asks:  # an interrupt cancels them all in one go
            ask.cancel()
        await settle(pilot, lambda: not isinstance(app.screen, PermissionScreen))
        for _ in range(5):
            await pilot.pause()
        assert not isinstance(app.screen, PermissionScreen)
        assert ports.waiting_permissions == 0


async def test_an_answer_to_a_withdrawn_dialog_reaches_no_other_request(tmp_path: Path):
    from textual.screen import ModalScreen

    app = Host()
    async with app.run_test() as pilot:
        ports = DialogPorts(app, tmp_path)
        first = asyncio.ensure_future(ports.request_permission(request(1)))
        await settle(pilot, lambda: isinstance(app.screen, PermissionScreen))
        stale = app.screen
        await app.push_screen(ModalScreen())  # the palette or the viewer on top of it
        first.cancel()  # meanwhile the engine stops waiting for it
        await settle(pilot, lambda: first.done())
        app.pop_screen()
        second = asyncio.ensure_future(ports.request_permission(request(2)))
        await settle(pilot, lambda: getattr(app.screen, "request", None) == request(2))
        await pilot.press("n", "enter")
        assert await second == Reject()
        await settle(pilot, lambda: app.screen is stale)
        await pilot.press("y")  # the user answers the stale dialog: it only closes
        await settle(pilot, lambda: app.screen is not stale)
        assert ports.waiting_permissions == 0
        third = asyncio.ensure_future(ports.request_permission(request(3)))
        await settle(pilot, lambda: getattr(app.screen, "request", None) == request(3))
        await pilot.press("escape")
        assert await third == Reject()  # and later requests are asked as usual


async def test_a_key_typed_as_the_dialog_appears_approves_nothing(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(PermissionScreen, "approve_delay_s", 60.0)
    app = Host()
    async with app.run_test() as pilot:
        ports = DialogPorts(app, tmp_path)
        ask = asyncio.ensure_future(ports.request_permission(request(1)))
        await settle(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("y", "a", "enter")  # the end of a prompt being typed
        assert not ask.done() and isinstance(app.screen, PermissionScreen)
        await pilot.press("escape")  # "no" works at once
        assert await ask == Reject()
