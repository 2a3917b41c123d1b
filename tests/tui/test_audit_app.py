"""A real app session (Pilot, the real engine on a scripted model) writes its audit log:
each decision as the person saw it asked, each answer they gave with the keys they pressed,
the rule "always" kept, and a question the mode settled, all in order, each exactly once."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from app_helpers import SIZE, bash, make_app, text, turn_over, until
from sandbox_helpers import SUPPORT

from core.settings.paths import settings_paths
from tui.screens.permission import PermissionScreen

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def asking(app: Any) -> bool:
    return isinstance(app.screen, PermissionScreen)


def audit_records(app: Any) -> list[dict[str, Any]]:
    path = app.live.session.audit_path
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def test_an_app_session_audits_every_decision_and_every_answer(project: Path):
    write = {
        "type": "tool_use",
        "name": "Write",
        "input": {"file_path": "{workspace}/notes.md", "content": "hello\n"},
    }
    app = make_app(
        project,
        [
            [bash("touch one.txt")],
            [bash("touch two.txt")],
            [bash("touch two.txt")],  # the rule kept by "always" allows it
            [bash("rm -rf build")],
            [write],
            [text("Done.")],
        ],
    )
    started = time.time()
    async with app.run_test(size=SIZE) as pilot:

        async def answer_when_asked(written: int, *keys: str) -> None:
            """Once the audit log holds `written` records and the dialog is up: the keys."""
            await until(
                pilot,
                lambda: asking(app) and len(audit_records(app)) == written,
                f"a dialog after {written} records",
            )
            await pilot.press(*keys)

        await answer_when_asked(1, "y")
        await answer_when_asked(3, "a")
        await answer_when_asked(6, "n", *"keep the build", "enter")
        await answer_when_asked(8, "shift+tab")  # accept edits settles the waiting Write
        await until(pilot, lambda: turn_over(app), "the turn to end")
        records = audit_records(app)
    stamps = [record.pop("at") for record in records]
    assert stamps == sorted(stamps) and started <= stamps[0] and stamps[-1] <= time.time()
    ask_sandbox = (
        {"sandbox": "none", "sandbox_why": "once a person says yes"}
        if SUPPORT.available
        else {"sandbox": "none", "sandbox_why": f"no sandbox here: {SUPPORT.problem}"}
    )
    kept = "Bash(touch two.txt:*)"
    notes = {"file_path": str(project / "notes.md"), "content": "hello\n"}
    assert records == [
        asked("toolu_demo_0_0", "touch one.txt", ask_sandbox),
        answered("toolu_demo_0_0", scope="once"),
        asked("toolu_demo_1_0", "touch two.txt", ask_sandbox),
        answered("toolu_demo_1_0", scope="always", rule=kept),
        {
            "kind": "decision",
            "tool_use_id": "toolu_demo_2_0",
            "tool": "Bash",
            "input": {"command": "touch two.txt"},
            "behavior": "allow",
            "decided_by": {"kind": "rule", "detail": f"the allow rule {kept} (session)"},
            "message": None,
            "mode": "default",
            "agent": None,
            "sandbox": "none",
            "sandbox_why": f"allowed by the allow rule {kept} (session)"
            if SUPPORT.available
            else f"no sandbox here: {SUPPORT.problem}",
        },
        asked("toolu_demo_3_0", "rm -rf build", ask_sandbox),
        answered(
            "toolu_demo_3_0", answer="reject", scope=None, feedback="keep the build", sandbox=None
        ),
        {
            "kind": "decision",
            "tool_use_id": "toolu_demo_4_0",
            "tool": "Write",
            "input": notes,
            "behavior": "ask",
            "decided_by": {"kind": "default", "detail": "no rule allows it"},
            "message": f"Write would change {project / 'notes.md'}.",
            "mode": "default",
            "agent": None,
            "sandbox": None,
            "sandbox_why": None,
        },
        # shift+tab while the Write waited: the change, by whom, before what it settled.
        {
            "kind": "mode",
            "from": "default",
            "to": "acceptEdits",
            "by": "key",
            "why": "the mode key",
        },
        # The mode changed while the person was asked: decided again, by the new mode,
        {
            "kind": "decision",
            "tool_use_id": "toolu_demo_4_0",
            "tool": "Write",
            "input": notes,
            "behavior": "allow",
            "decided_by": {
                "kind": "mode",
                "detail": "accept edits mode (inside the working directories)",
            },
            "message": None,
            "mode": "acceptEdits",
            "agent": None,
            "sandbox": None,
            "sandbox_why": None,
        },
        # and the question, which nobody answered, ends on record: withdrawn, and by what.
        {
            "kind": "withdrawn",
            "tool_use_id": "toolu_demo_4_0",
            "tool": "Write",
            "behavior": "allow",
            "decided_by": {
                "kind": "mode",
                "detail": "accept edits mode (inside the working directories)",
            },
            "agent": None,
        },
    ]
    local = json.loads(settings_paths(project)["local"].read_text())
    assert local["permissions"]["allow"] == [kept]
    assert (project / "one.txt").exists() and (project / "notes.md").exists()


def asked(tool_use_id: str, command: str, sandbox: dict[str, str]) -> dict[str, Any]:
    reason = f"`{command}` is not a read-only command"
    return {
        "kind": "decision",
        "tool_use_id": tool_use_id,
        "tool": "Bash",
        "input": {"command": command},
        "behavior": "ask",
        "decided_by": {"kind": "analysis", "detail": reason},
        "message": f"{reason}.",
        "mode": "default",
        "agent": None,
        **sandbox,
    }


def answered(tool_use_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "kind": "answer",
        "tool_use_id": tool_use_id,
        "tool": "Bash",
        "answer": "approve",
        "rule": None,
        "feedback": None,
        "agent": None,
        "sandbox": "outside the sandbox",
        **fields,
    }


async def test_an_unwritable_audit_log_is_said_once_and_on_the_status_screen(
    project: Path, monkeypatch: pytest.MonkeyPatch
):
    """The audit log's path is a directory (a real failure; CI runs as root, so chmod would
    not stop the write): the person is told once, the status screen says so, and the calls
    are decided as they would have been (the log is a record, not a guard)."""
    from textual.widgets import Static

    from core.agent import sessions
    from tui.screens.status import StatusScreen

    monkeypatch.setattr(sessions, "AUDIT_NAME", ".")
    turns = [[bash("touch one.txt")], [bash("touch two.txt")], [text("Done.")]]
    app = make_app(project, turns, allow=["Bash(touch:*)"])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app), "the turn to end")
        said = [str(n.message) for n in app._notifications if "not written" in str(n.message)]
        assert len(said) == 1, said
        assert said[0].startswith("Audit log not written: [Errno 21] Is a directory")
        # Allowed by the rule, as with a log that works: nothing asked, both ran.
        assert not asking(app) and (project / "one.txt").exists()
        assert (project / "two.txt").exists()
        await pilot.press(*"/status", "enter")
        await until(pilot, lambda: isinstance(app.screen, StatusScreen), "the status screen")
        shown = "\n".join(str(static.render()) for static in app.screen.query(Static))
        assert "Records   the audit log" in shown and "could not be written" in shown


async def test_a_mode_chosen_with_slash_mode_is_recorded_as_by_slash(project: Path):
    app = make_app(project, [[text("Hello.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None, "the session")
        await pilot.press(*"/mode plan", "enter")
        await until(pilot, lambda: audit_records(app), "the mode's record")
        assert app.live is not None
        app.set_mode("default")  # what the palette's "Mode: Default" runs
        await until(pilot, lambda: len(audit_records(app)) == 2, "the second record")
        records = audit_records(app)
    assert [(r["kind"], r["from"], r["to"], r["by"]) for r in records] == [
        ("mode", "default", "plan", "slash"),
        ("mode", "plan", "default", "palette"),
    ]
