"""`proctor check` through its engine: the real chain, the real settings, plain answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from permission_tools import Fetcher, FileEditor, FileReader, Shell

from core.check import Checker, CheckError, CheckRequest, check_batch
from core.tool import ToolPool
from core.trust import trust

TOOLS = ToolPool([Shell(), FileReader(), FileEditor(), Fetcher()])


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    root = tmp_path / "app"
    (root / ".proctor").mkdir(parents=True)
    (root / ".proctor" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(git push:*)"], "allow": ["Bash(npm test:*)"]}})
    )
    trust(root)
    return root


async def test_a_denied_command_names_the_rule_and_its_file(project: Path):
    result = await Checker(TOOLS, cwd=project).check(CheckRequest("Bash", "git push origin main"))
    assert result.behavior == "deny"
    assert "Bash(git push:*)" in result.reason
    assert str(project / ".proctor" / "settings.json") in result.decided_by.detail
    text = result.as_text("git push origin main")
    assert text.startswith("deny: Bash(git push origin main)")
    assert "read-only: no" in text


async def test_the_part_of_a_command_that_is_not_read_only_is_named(project: Path):
    result = await Checker(TOOLS, cwd=project).check(CheckRequest("Bash", "ls && rm -rf build"))
    assert result.behavior == "ask" and "rm -rf build" in result.reason
    assert result.decided_by.kind == "analysis"


async def test_modes_cwd_and_extra_rules(project: Path):
    checker = Checker(TOOLS, cwd=project)
    plan = await checker.check(CheckRequest("Edit", {"file_path": "a.py"}, mode="plan"))
    assert plan.behavior == "deny" and plan.mode == "plan"
    allowed = await checker.check(
        CheckRequest("Edit", {"file_path": "a.py"}, allow=("Edit(*.py)",))
    )
    assert allowed.behavior == "allow" and "Edit(*.py)" in allowed.decided_by.detail
    read = await checker.check(CheckRequest("Read", '{"file_path": "README.md"}'))
    assert read.behavior == "allow" and read.read_only and read.concurrency_safe


async def test_isolated_reads_no_settings_file(project: Path):
    result = await Checker(TOOLS, cwd=project, isolated=True).check(
        CheckRequest("Bash", "git push origin main")
    )
    assert result.behavior == "ask"


async def test_an_untrusted_project_is_checked_as_a_new_session_would_see_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    root = tmp_path / "fresh"
    (root / ".proctor").mkdir(parents=True)
    (root / ".proctor" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash"]}})
    )
    result = await Checker(TOOLS, cwd=root).check(CheckRequest("Bash", "make"))
    assert result.behavior == "ask"
    assert any("not trusted" in note for note in result.notes)


async def test_bad_requests_say_what_to_give(project: Path):
    checker = Checker(TOOLS, cwd=project)
    with pytest.raises(CheckError, match="unknown tool 'Teleport'"):
        await checker.check(CheckRequest("Teleport", "x"))
    with pytest.raises(CheckError, match="looks like JSON but is not valid"):
        await checker.check(CheckRequest("WebFetch", '{"url": '))
    with pytest.raises(CheckError, match="required parameter `file_path`"):
        await checker.check(CheckRequest("Read", {}))


async def test_batch_answers_every_line_in_order_and_bad_lines_get_errors(project: Path):
    lines = [
        json.dumps({"tool": "Bash", "input": {"command": "git status"}}),
        "this is not json",
        json.dumps({"tool": "Bash", "input": {"command": "npm test -- -u"}}),
        json.dumps({"tool": "Bash", "input": {"command": "rm x"}, "mode": "plan"}),
        json.dumps(
            {"tool": "Bash", "input": {"command": "rm x"}, "rules": {"allow": ["Bash(rm:*)"]}}
        ),
        json.dumps({"tool": "Bash", "input": {"command": "ls"}, "mode": "yolo"}),
        json.dumps({"tool": "Read", "input": {"file_path": "/etc/hosts"}, "cwd": "sub"}),
    ]
    answers = [a async for a in check_batch(Checker(TOOLS, cwd=project), lines, project)]
    assert [a.get("behavior", "error") for a in answers] == [
        "allow",
        "error",
        "allow",
        "deny",
        "allow",
        "error",
        "ask",
    ]
    assert set(answers[0]) == {
        "behavior",
        "reason",
        "read_only",
        "concurrency_safe",
        "decided_by",
        "mode",
    }
    assert answers[0]["read_only"] is True and answers[0]["concurrency_safe"] is True
    assert "yolo" in answers[5]["error"]


async def test_a_project_mcp_json_is_read_and_its_problems_reported(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    root = tmp_path / "cloned"
    root.mkdir()
    (root / ".mcp.json").write_text('{"mcpServers": {"old": {"type": "sse", "url": "https://x"}}}')
    result = await Checker(TOOLS, cwd=root).check(CheckRequest("Read", {"file_path": "a.py"}))
    (problem,) = result.problems
    assert problem.startswith(f"{root / '.mcp.json'}:1:") and '"sse" is not supported' in problem
    assert "this project is not trusted yet, as a new session would see it" in result.notes
