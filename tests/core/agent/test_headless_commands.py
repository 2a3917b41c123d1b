"""`proctor -p "/name args"`: custom commands run headless; built-ins answer or refuse."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from core.agent.headless import HeadlessOptions, run_headless


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".claude" / "commands").mkdir(parents=True)
    (folder / ".claude" / "commands" / "explain.md").write_text(
        "---\ndescription: Explain a file\n---\nExplain $1 to a newcomer ($ARGUMENTS).\n"
    )
    (folder / ".scenario.json").write_text(
        json.dumps(
            {
                "name": "t",
                "description": "one answer",
                "prompt": "go",
                "workspace": "cwd",
                "turns": [[{"type": "text", "text": "Explained."}]],
            }
        )
    )
    return folder


async def run(project: Path, prompt: str, capsys) -> tuple[int, list[dict], str]:
    out = io.StringIO()
    options = HeadlessOptions(
        prompt=prompt,
        cwd=project,
        output_format="stream-json",
        demo=True,
        scenario=str(project / ".scenario.json"),
        demo_speed=0.0,
    )
    status = await run_headless(options, out)
    lines = out.getvalue().splitlines()
    records = [json.loads(line) for line in lines] if lines and lines[0].startswith("{") else []
    return status, records or [{"text": out.getvalue()}], capsys.readouterr().err


async def test_a_custom_command_is_sent_expanded(project: Path, capsys):
    status, records, _ = await run(project, "/explain core.py slowly", capsys)
    assert status == 0
    sent = next(r for r in records if r["type"] == "user")
    assert "Explain core.py to a newcomer (core.py slowly)." in json.dumps(sent)
    assert records[-1]["result"] == "Explained."


async def test_help_prints_the_commands_and_sends_nothing(project: Path, capsys):
    status, records, _ = await run(project, "/help", capsys)
    assert status == 0
    [listing] = records
    assert listing["type"] == "commands"
    named = {c["name"]: c["description"] for c in listing["commands"]}
    assert named["explain"] == "Explain a file (project)" and "clear" in named
    assert not list((project.parent / "data").rglob("*.jsonl"))  # no session was started


async def test_help_as_text(project: Path, capsys):
    out = io.StringIO()
    scenario = str(project / ".scenario.json")
    options = HeadlessOptions(prompt="/help", cwd=project, demo=True, scenario=scenario)
    assert await run_headless(options, out) == 0
    assert "/explain — Explain a file (project)" in out.getvalue().splitlines()


async def test_unknown_and_screen_only_commands_fail_plainly(project: Path, capsys):
    status, _, err = await run(project, "/explian x", capsys)
    assert status == 2 and "There is no /explian command; nothing was sent." in err
    assert "/explain" in err  # the near miss is suggested
    status, _, err = await run(project, "/clear", capsys)
    assert status == 2 and "/clear works in the app, not with -p" in err


async def test_a_commands_model_is_used_for_its_turn_only(project: Path, capsys):
    (project / ".claude" / "commands" / "quick.md").write_text(
        "---\nmodel: claude-haiku-4-5\n---\nBe quick.\n"
    )
    status, records, _ = await run(project, "/quick", capsys)
    assert status == 0
    usage = [r for r in records if r.get("kind") == "usage"]
    assert usage and {r["model"] for r in usage} == {"claude-haiku-4-5"}


async def test_the_demos_sample_project_brings_a_command(tmp_path: Path, capsys):
    out = io.StringIO()
    options = HeadlessOptions(
        prompt="/overview the tests",
        cwd=tmp_path,
        output_format="stream-json",
        demo=True,
        scenario="quick",
        demo_speed=0.0,
    )
    assert await run_headless(options, out) == 0
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    sent = json.dumps(next(r for r in records if r["type"] == "user"))
    assert "Give me a quick overview of this project" in sent and "Focus on: the tests" in sent


async def test_a_skill_runs_headless_as_its_slash_name_once_the_project_is_trusted(
    project: Path, capsys
):
    folder = project / ".claude" / "skills" / "tour"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: tour\ndescription: Show a newcomer around\n---\nShow $1 around.\n"
    )
    status, _, err = await run(project, "/tour alice", capsys)
    assert status == 2 and "no /tour command" in err  # not trusted: not offered
    out = io.StringIO()
    options = HeadlessOptions(
        prompt="/tour alice",
        cwd=project,
        output_format="stream-json",
        demo=True,
        scenario=str(project / ".scenario.json"),
        demo_speed=0.0,
        trust=True,
    )
    assert await run_headless(options, out) == 0
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    (user,) = [r for r in records if r.get("type") == "user"]
    (sent,) = user["message"]["content"]
    assert sent["text"].startswith('<skill name="tour">') and "Show alice around." in sent["text"]


async def test_a_projects_line_runs_only_in_a_trusted_directory(project: Path, capsys):
    (project / ".claude" / "commands" / "mark.md").write_text(
        "---\nallowed-tools: Bash(touch:*)\n---\nMarked: !`touch marked`"
    )
    status, records, _ = await run(project, "/mark", capsys)
    assert status == 0 and not (project / "marked").exists()
    notices = [r for r in records if r.get("kind") == "command_notice"]
    assert "/mark: !`touch marked` was not run: the project is not trusted" in notices[0]["text"]
    sent = json.dumps(next(r for r in records if r["type"] == "user"))
    assert "was not run" in sent

    out = io.StringIO()
    scenario = str(project / ".scenario.json")
    options = HeadlessOptions(
        prompt="/mark", cwd=project, demo=True, scenario=scenario, demo_speed=0.0, trust=True
    )
    assert await run_headless(options, out) == 0
    assert (project / "marked").exists()  # trusted: the command's allowed-tools grant it


async def test_a_line_nobody_can_approve_is_not_run(project: Path, capsys):
    (project / ".claude" / "commands" / "mark.md").write_text("Marked: !`touch marked`")
    out = io.StringIO()
    scenario = str(project / ".scenario.json")
    options = HeadlessOptions(
        prompt="/mark", cwd=project, demo=True, scenario=scenario, demo_speed=0.0, trust=True
    )
    assert await run_headless(options, out) == 0
    assert not (project / "marked").exists()  # no grant, no rule, nobody to ask: refused
    assert "/mark: !`touch marked` was not run" in capsys.readouterr().err


@pytest.mark.parametrize("switch", ["env", "setting"])
async def test_without_claude_settings_the_users_claude_commands_and_skills_stay_out(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, switch: str
):
    claude = tmp_path / "claude-home"
    (claude / "commands").mkdir(parents=True)
    (claude / "commands" / "greet.md").write_text("Greet $ARGUMENTS warmly.\n")
    (claude / "skills" / "tidy").mkdir(parents=True)
    (claude / "skills" / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: Tidy up\n---\nTidy the desk.\n"
    )
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))

    async def model_loads_tidy() -> str:
        calls = [{"type": "tool_use", "name": "Skill", "input": {"skill": "tidy"}}]
        scenario = json.loads((project / ".scenario.json").read_text())
        scenario["turns"] = [calls, [{"type": "text", "text": "Done."}]]
        (project / ".scenario.json").write_text(json.dumps(scenario))
        out = io.StringIO()
        options = HeadlessOptions(
            prompt="tidy up",
            cwd=project,
            output_format="stream-json",
            demo=True,
            scenario=str(project / ".scenario.json"),
            demo_speed=0.0,
            allow=["Skill"],
        )
        await run_headless(options, out)
        return out.getvalue()

    # Read while they are on: the user's command runs, the skill is a command and loads.
    status, records, _ = await run(project, "/greet bob", capsys)
    assert status == 0 and "Greet bob warmly." in json.dumps(records)
    status, records, _ = await run(project, "/tidy", capsys)
    assert status == 0 and "Tidy the desk." in json.dumps(records)
    assert "Tidy the desk." in await model_loads_tidy()
    if switch == "env":
        monkeypatch.setenv("PROCTOR_NO_CLAUDE_SETTINGS", "1")
    else:  # the person's own proctor settings: a project's file cannot say this for them
        user_dir = tmp_path / "proctor-home"
        user_dir.mkdir()
        (user_dir / "settings.json").write_text('{"readClaudeSettings": false}')
        monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(user_dir))
    for name in ("greet", "tidy"):
        status, _, err = await run(project, f"/{name} x", capsys)
        assert status == 2 and f"no /{name} command" in err
    said = await model_loads_tidy()
    assert "There is no skill 'tidy' in this session" in said and "Tidy the desk." not in said


async def test_an_argument_that_would_substitute_a_command_runs_nothing(project: Path, capsys):
    # Red team: under a grant of all of Bash, arithmetic would run the argument's $(...).
    (project / ".claude" / "commands" / "sum.md").write_text(
        "---\nallowed-tools: Bash\n---\nTotal: !`echo $(( 1 + $1 ))`"
    )
    out = io.StringIO()
    scenario = str(project / ".scenario.json")
    options = HeadlessOptions(
        prompt="/sum 'a[$(touch pwned)]'",
        cwd=project,
        demo=True,
        scenario=scenario,
        demo_speed=0.0,
        trust=True,
    )
    assert await run_headless(options, out) == 0
    assert not (project / "pwned").exists()
    assert "/sum: !`echo $(( 1 + $1 ))` was not run: an argument holds $(" in (
        capsys.readouterr().err
    )
    options = HeadlessOptions(
        prompt="/sum 41", cwd=project, demo=True, scenario=scenario, demo_speed=0.0, trust=True
    )
    assert await run_headless(options, out) == 0
