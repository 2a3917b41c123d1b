"""Project instructions in a live session: in the requests the model gets, only once trusted."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.agent.demo import DEMO_MODEL, DemoModel
from core.agent.live import LiveSession, SessionOptions, open_session, prepare_session
from core.agent.model import ModelClient
from core.agent.scenario import parse_scenario
from core.events import EventRecorder
from tui.trust_findings import trust_findings


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-user"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "lib").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "feature-x", str(root)], check=True)
    (root / "CLAUDE.md").write_text("Always run `make check` before you stop.\n@docs/style.md\n")
    (root / "docs").mkdir()
    (root / "docs" / "style.md").write_text("Prefer tabs in the Makefile.\n")
    (root / "lib" / "AGENTS.md").write_text("lib/ is generated: never edit it by hand.\n")
    (root / "lib" / "gen.py").write_text("x = 1\n")
    user = tmp_path / "claude-user"
    user.mkdir()
    (user / "CLAUDE.md").write_text("Call me Sam.\n")
    return root


async def run_reading(
    project: Path, *, trusted: bool, asked: bool = True, sink: EventRecorder | None = None
) -> tuple[LiveSession, list[Any]]:
    """`asked`: the person answered the trust question (else nothing was asked)."""
    read = {"type": "tool_use", "name": "Read", "input": {"file_path": "{workspace}/lib/gen.py"}}
    script = {
        "name": "t",
        "turns": [
            [read],
            [{"type": "text", "text": "done"}],
        ],
    }
    demo = DemoModel(parse_scenario(json.dumps(script)), workspace=project, speed=0)
    requests: list[Any] = []
    serve = demo.handle

    async def handle(request: Any) -> Any:
        requests.append(json.loads(request.content))
        return await serve(request)

    demo.handle = handle  # type: ignore[method-assign]
    prepared = prepare_session(SessionOptions(cwd=project, mode="bypassPermissions"))
    live = await open_session(
        prepared,
        sink=sink or EventRecorder(),
        trusted=trusted,
        project_trusted=trusted if asked else None,
        model=ModelClient(demo.client(max_retries=0), model=DEMO_MODEL),
    )
    ended = await live.send("look at lib")
    assert ended.stop_reason == "end_turn"
    return live, requests


async def test_a_trusted_projects_instructions_reach_the_model(project: Path) -> None:
    live, requests = await run_reading(project, trusted=True)
    try:
        first, second = requests
        stable, volatile = first["system"]
        assert "Call me Sam." in stable["text"]
        assert "make check" in stable["text"] and "Prefer tabs" in stable["text"]
        assert stable["text"].index("Call me Sam.") < stable["text"].index("make check")
        # The cached part is the same on every request; git facts are in the volatile part.
        assert second["system"][0] == stable
        assert "Is a git repository: yes" in volatile["text"]
        assert "Current branch: feature-x" in volatile["text"]
        # Nobody to answer here (a headless session): git is not run, `.git` says the branch.
        assert "Git status: not read (not read in a headless run)" in volatile["text"]
        # Reading lib/gen.py brought lib/AGENTS.md, beside that Read's result, once.
        results = second["messages"][-1]["content"]
        assert results[0]["type"] == "tool_result"
        reminder = results[-1]["text"]
        assert reminder.startswith("<system-reminder>") and "never edit it by hand" in reminder
        assert "never edit" not in second["system"][0]["text"]
        assert live.instructions is not None
        loaded = [(f.path.name, f.source) for f in live.instructions.loaded()]
        assert loaded == [
            ("CLAUDE.md", "user"),
            ("CLAUDE.md", "project"),
            ("style.md", "project"),
            ("AGENTS.md", "agents"),
        ]
        assert live.instructions.loaded()[2].imported_from == project / "CLAUDE.md"
    finally:
        await live.close()


async def test_an_untrusted_projects_instructions_are_listed_and_not_used(project: Path) -> None:
    prepared = prepare_session(SessionOptions(cwd=project))
    findings = trust_findings(prepared.settings, project, prepared.instructions)
    assert findings == [
        "CLAUDE.md: instructions for the agent (2 lines)",
        "docs/style.md: instructions for the agent (1 line, imported by CLAUDE.md)",
    ]
    live, requests = await run_reading(project, trusted=False)
    try:
        for request in requests:
            stable = request["system"][0]["text"]
            assert "Call me Sam." in stable  # the user's own file is always theirs to use
            assert "make check" not in stable and "Prefer tabs" not in stable
        assert "never edit" not in json.dumps(requests[1]["messages"])
        assert any("instructions" in n and "not trusted" in n for n in live.notes)
        assert live.instructions is not None
        assert [f.source for f in live.instructions.loaded()] == ["user"]
    finally:
        await live.close()


async def test_the_demo_sample_brings_its_claude_md_and_the_readme_it_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    prepared = prepare_session(SessionOptions(cwd=tmp_path, demo=True, demo_speed=0))
    live = await open_session(prepared, sink=EventRecorder(), trusted=True)
    try:
        assert live.instructions is not None
        assert [f.path.name for f in live.instructions.loaded()] == ["CLAUDE.md", "README.md"]
        assert live.instructions.problems == ()
        stable = live.loop.extra_prompt
        assert "python3 -m unittest" in stable and "## Layout" in stable
    finally:
        await live.close()


async def test_instructions_cannot_bring_in_files_outside_the_project_or_denied_ones(
    project: Path, tmp_path: Path
) -> None:
    # Red team: a trusted project's CLAUDE.md importing a key from elsewhere, a CLAUDE.md in a
    # subdirectory that is a link to another key, and an import a Read deny rule covers: none
    # of them is sent to the model; each is reported.
    secrets = tmp_path / "home" / ".ssh"
    secrets.mkdir(parents=True)
    (secrets / "id_rsa").write_text("KEY-ONE-imported\n")
    (secrets / "id_ed25519").write_text("KEY-TWO-linked\n")
    (project / "CLAUDE.md").write_text(f"Run make check.\n@docs/style.md\n@{secrets}/id_rsa\n")
    (project / "lib" / "CLAUDE.md").symlink_to(secrets / "id_ed25519")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./docs/**)"]}})
    )
    live, requests = await run_reading(project, trusted=True)
    try:
        sent = json.dumps(requests)
        assert "make check" in sent and "never edit it by hand" in sent  # the rest still goes
        assert "KEY-ONE" not in sent and "KEY-TWO" not in sent and "Prefer tabs" not in sent
        assert live.instructions is not None
        problems = "\n".join(live.instructions.problems)
        assert "id_rsa: outside the project" in problems
        assert f"-> {secrets / 'id_ed25519'}" in problems
        assert "style.md: the deny rule Read(./docs/**)" in problems
        assert any("id_rsa: outside the project" in note for note in live.notes)
    finally:
        await live.close()


async def test_subdirectory_instructions_wait_for_the_person_to_trust_the_directory(
    project: Path,
) -> None:
    # Red team: a project whose only instructions are in lib/ has nothing for the trust
    # dialog, so the front end opens it as "trusted" without asking; lib/AGENTS.md must not
    # then reach the model when a file there is read.
    (project / "CLAUDE.md").unlink()
    live, requests = await run_reading(project, trusted=True, asked=False)
    try:
        assert "never edit it by hand" not in json.dumps(requests)
        assert live.instructions is not None
        assert [f.source for f in live.instructions.loaded()] == ["user"]
    finally:
        await live.close()


async def test_a_sub_agent_gets_the_instructions_and_finds_subdirectories_for_itself(
    project: Path,
) -> None:
    read = {"type": "tool_use", "name": "Read", "input": {"file_path": "{workspace}/lib/gen.py"}}
    task = {
        "type": "tool_use",
        "name": "Task",
        "input": {"description": "look", "prompt": "Read lib.", "subagent_type": "Explore"},
        "agent_turns": [[read], [{"type": "text", "text": "lib is generated."}]],
    }
    script = {"name": "t", "turns": [[task], [read], [{"type": "text", "text": "done"}]]}
    demo = DemoModel(parse_scenario(json.dumps(script)), workspace=project, speed=0)
    requests: list[Any] = []
    serve = demo.handle

    async def handle(request: Any) -> Any:
        requests.append(json.loads(request.content))
        return await serve(request)

    demo.handle = handle  # type: ignore[method-assign]
    events = EventRecorder()
    prepared = prepare_session(SessionOptions(cwd=project, mode="bypassPermissions"))
    live = await open_session(
        prepared,
        sink=events,
        trusted=True,
        project_trusted=True,
        model=ModelClient(demo.client(max_retries=0), model=DEMO_MODEL),
    )
    try:
        ended = await live.send("look at lib")
        assert ended.stop_reason == "end_turn"
        agent = [r for r in requests if "Read lib." in json.dumps(r["messages"][0])]
        main = [r for r in requests if r not in agent]
        stable = agent[0]["system"][0]["text"]
        assert "Explore sub-agent" in stable
        assert "Call me Sam." in stable and "make check" in stable and "Prefer tabs" in stable
        # Its own read of lib/ brought lib/AGENTS.md to it...
        assert "never edit it by hand" in json.dumps(agent[-1]["messages"][-1])
        # ...and the main agent, reading there afterwards, is still told: it is news to it.
        assert "never edit it by hand" in json.dumps(main[-1]["messages"][-1])
        assert "never edit" not in main[-1]["system"][0]["text"]
    finally:
        await live.close()


async def test_the_person_is_told_when_a_subdirectorys_instructions_join(project: Path) -> None:
    from core.agent.events import InstructionsJoined
    from core.agent.transcript_replay import past_events

    events = EventRecorder()
    live, _ = await run_reading(project, trusted=True, sink=events)
    try:
        joined = [e for e in events.events if isinstance(e, InstructionsJoined)]
        assert len(joined) == 1
        assert joined[0].describe() == (
            "instructions from lib/AGENTS.md now apply (found reading lib/gen.py)"
        )
        # The transcript keeps it: a resumed session shows the note again.
        replayed = past_events(live.session.transcript().records())
        again = [e for e in replayed.events if isinstance(e, InstructionsJoined)]
        assert [e.describe() for e in again] == [joined[0].describe()]
    finally:
        await live.close()


@pytest.mark.parametrize("output_format", ["text", "stream-json"])
async def test_a_headless_run_reports_instructions_that_join(
    project: Path, monkeypatch: pytest.MonkeyPatch, output_format: str
) -> None:
    import io
    import sys

    from core.agent import scenario as scenarios
    from core.agent.headless import HeadlessOptions, run_headless

    read = {"type": "tool_use", "name": "Read", "input": {"file_path": "{workspace}/lib/gen.py"}}
    script = {
        "name": "t",
        "prompt": "look at lib",
        "workspace": "cwd",
        "turns": [[read], [{"type": "text", "text": "done"}]],
    }
    monkeypatch.setattr(scenarios, "load_scenario", lambda name: parse_scenario(json.dumps(script)))
    (project / ".proctor").mkdir()
    (project / ".proctor" / "settings.json").write_text('{"permissions": {"allow": ["Read"]}}')
    from core.trust import trust

    trust(project)
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)
    options = HeadlessOptions(
        prompt=None,
        cwd=project,
        output_format=output_format,  # type: ignore[arg-type]
        demo=True,
        scenario="t",
        demo_speed=0.0,
    )
    assert await run_headless(options, screen) == 0
    said = screen.getvalue()
    if output_format == "text":
        assert "proctor: instructions from lib/AGENTS.md now apply (found reading lib/gen.py)" in (
            said.splitlines()
        )
    else:
        records = [json.loads(line) for line in said.splitlines() if line.startswith("{")]
        joined = [r for r in records if r.get("kind") == "instructions_joined"]
        assert [(r["paths"], r["found_by"]) for r in joined] == [
            ([str(project / "lib" / "AGENTS.md")], str(project / "lib" / "gen.py"))
        ]


async def test_a_projects_rules_are_in_the_trust_question_and_wait_for_trust(
    project: Path,
) -> None:
    rules = project / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.md").write_text("Name things plainly.\n")
    (rules / "lib.md").write_text('---\npaths: ["lib/**"]\n---\nlib rule: regenerate it.\n')
    prepared = prepare_session(SessionOptions(cwd=project))
    findings = trust_findings(prepared.settings, project, prepared.instructions)
    assert ".claude/rules/style.md: instructions for the agent (1 line)" in findings
    assert any(f.startswith(".claude/rules/lib.md: instructions") for f in findings)
    live, requests = await run_reading(project, trusted=False)
    try:
        said = json.dumps(requests)
        assert "Name things plainly" not in said and "lib rule" not in said
    finally:
        await live.close()
    live, requests = await run_reading(project, trusted=True)
    try:
        first, second = requests
        assert "Name things plainly" in first["system"][0]["text"]
        assert "lib rule" not in json.dumps(first)
        assert "lib rule: regenerate it." in json.dumps(second["messages"][-1])
    finally:
        await live.close()


async def test_an_import_a_read_ask_rule_covers_is_left_out(project: Path) -> None:
    # Red team: "ask me before anything reads docs/" must hold for an @import too. Nobody is
    # asked about an instruction file, so an ask is a no, as for a command's @path include.
    (project / ".proctor").mkdir()
    (project / ".proctor" / "settings.local.json").write_text(
        json.dumps({"permissions": {"ask": ["Read(./docs/**)"]}})
    )
    live, requests = await run_reading(project, trusted=True)
    try:
        sent = json.dumps(requests)
        assert "make check" in sent and "Prefer tabs" not in sent  # CLAUDE.md goes, not docs/
        assert live.instructions is not None
        problems = "\n".join(live.instructions.problems)
        assert "style.md: the ask rule Read(./docs/**)" in problems
    finally:
        await live.close()
