"""`/resume [id]`: carry an earlier session on in this window, as `proctor --resume ID` would.

The switch is the start-up path run again, not a second way of loading a session: the
earlier session is prepared exactly as `--resume` prepares it (settings, transcript read
back, a demo's own scratch copy found), the running one is closed as quitting closes it (its
shells and sub-agents stopped, its transcript given a clean end, a demo's scratch copy
removed or kept as at exit), and the app starts the prepared session on a fresh main screen,
which draws its past (tui/past.py) as at start.

Order matters for "nothing lost": the new session is prepared *before* the running one is
touched, so an unknown or ambiguous id, one that cannot be read, or a demo session whose
scratch copy is gone (start-up would begin a new one instead) is said and the running
session goes on as it was. A running turn (or compaction) is never torn down from here: the
person stops it with esc first, as `/clear` asks, since a half-finished call's shells and
questions belong to the turn that started them.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.agent.live import PreparedSession

    from .app import ProctorApp

TURN_RUNNING = "/resume waits for the turn to end: press esc to stop it first."


def resume_refusal(app: ProctorApp) -> str | None:
    """Why the app cannot switch sessions now, or None."""
    if app.live is None or app.prepared is None:
        return "/resume: the session has not started yet."
    if app.turn_running:
        return TURN_RUNNING
    return None


async def resume_in_place(app: ProctorApp, wanted: str) -> None:
    """Switch the app to session `wanted` (an id or a unique prefix); said in the
    conversation when it cannot be done, with the running session left as it was."""
    if (why := resume_refusal(app)) is not None:
        app.conversation.add_notice(why, "warning")
        return
    current = app.prepared
    assert current is not None
    from .launch import prepare

    options = replace(current.options, resume=wanted.strip(), continue_latest=False)
    prepared = await asyncio.to_thread(prepare, options)
    if isinstance(prepared, str):
        app.conversation.add_notice(f"/resume: {prepared}; nothing changed.", "warning")
        return
    if not prepared.resumed:  # a demo whose scratch copy is gone: a new session, not it
        _discard(prepared, current)
        from core.agent.sessions import remove_unused

        await asyncio.to_thread(remove_unused, prepared.session)  # made by prepare: unused
        said = "that demo session's scratch workspace is gone, so it cannot be carried on"
        app.conversation.add_notice(f"/resume: {said}; nothing changed.", "warning")
        return
    if prepared.session.id == current.session.id:
        _discard(prepared, current)
        said = f"/resume: session {current.session.id} is the one running here."
        app.conversation.add_notice(said, "info")
        return
    if app.turn_running or app.live is None:  # a prompt sent while the session was read
        _discard(prepared, current)
        app.conversation.add_notice(TURN_RUNNING, "warning")
        return
    await app.switch_session(prepared)


def _discard(prepared: PreparedSession, current: PreparedSession) -> None:
    """A prepared session not used after all: its demo copy (if a new one) goes."""
    from core.agent.live import end_workspace

    if prepared.scratch is not None and prepared.cwd != current.cwd:
        end_workspace(prepared)
