"""`/permissions` writing rules to settings files, typed as a person would, on the real engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_helpers import SIZE, bash, make_app, text, turn_over, until

from tui.screens.permission import PermissionScreen
from tui.slash_permissions import RuleChange, parse_change
from tui.widgets.conversation import Notice

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def notices(app) -> str:
    return "\n".join(str(notice.render()) for notice in app.conversation.query(Notice))


def rules(app) -> list[tuple[str, str, Path | None]]:
    context = app.live.store.get().permission_context
    return [(r.behavior, str(r), r.path) for r in context.rules]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("deny Bash(rm:*)", RuleChange("add", "deny", "Bash(rm:*)", None)),
        ("allow Read --local", RuleChange("add", "allow", "Read", "local")),
        ("ask --user WebFetch", RuleChange("add", "ask", "WebFetch", "user")),
        ("remove deny Bash(rm:*)", RuleChange("remove", "deny", "Bash(rm:*)", None)),
        ("remove Read --project", RuleChange("remove", None, "Read", "project")),
        # A flag inside a rule's parentheses is the rule's own text.
        ("allow Bash(echo --local)", RuleChange("add", "allow", "Bash(echo --local)", None)),
        (
            "allow Bash(echo  two  spaces)",
            RuleChange("add", "allow", "Bash(echo  two  spaces)", None),
        ),
    ],
)
def test_parse_change(arguments: str, expected: RuleChange):
    assert parse_change(arguments) == expected


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ("allow Read --local --user", "takes one of"),
        ("allow Read --global", "--global is not an option"),
        ("grant Read", "/permissions allow|ask|deny RULE"),
        ("remove deny", "/permissions allow|ask|deny RULE"),
        ("allow --local", "/permissions allow|ask|deny RULE"),
    ],
)
def test_parse_change_refuses_what_it_cannot_read(arguments: str, said: str):
    result = parse_change(arguments)
    assert isinstance(result, str) and said in result


async def test_a_rule_written_to_the_local_file_applies_at_once_and_keeps_the_file(project: Path):
    local = project / ".proctor" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"model": "kept", "permissions": {"deny": ["Read(./secret)"]}}))
    turns = [[bash("touch made")], [text("Made it.")]]
    app = make_app(project, turns, prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press(*"/permissions allow Bash(touch:*) --local", "enter")
        await until(pilot, lambda: "it applies now" in notices(app))
        assert ("allow", "Bash(touch:*)", local) in rules(app)
        data = json.loads(local.read_text())
        assert data == {
            "model": "kept",
            "permissions": {"deny": ["Read(./secret)"], "allow": ["Bash(touch:*)"]},
        }
        await pilot.press(*"/permissions", "enter")
        await until(pilot, lambda: f"Bash(touch:*)  — {local}" in notices(app))
        # The rule holds for the very next call: touch runs, nobody is asked.
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        assert (project / "made").exists()
        assert not any(isinstance(s, PermissionScreen) for s in app.screen_stack)


async def test_remove_respects_the_kind_and_the_file(project: Path):
    local = project / ".proctor" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
    app = make_app(project, [[text("ok")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press(*"/permissions allow Bash(rm:*)", "enter")
        await until(pilot, lambda: ("allow", "Bash(rm:*)", None) in rules(app))
        # Both kinds are in force: a bare remove asks which.
        await pilot.press(*"/permissions remove Bash(rm:*)", "enter")
        await until(pilot, lambda: "say which" in notices(app))
        assert len(rules(app)) == 2
        # The session's allow goes; the file's deny of the same text stays.
        await pilot.press(*"/permissions remove allow Bash(rm:*)", "enter")
        await until(pilot, lambda: "Removed the allow rule Bash(rm:*)" in notices(app))
        assert rules(app) == [("deny", "Bash(rm:*)", local)]
        await pilot.press(*"/permissions remove deny Bash(rm:*)", "enter")
        await until(pilot, lambda: "add --local to remove it there" in notices(app))
        assert rules(app) == [("deny", "Bash(rm:*)", local)]
        await pilot.press(*"/permissions remove ask Bash(rm:*) --local", "enter")
        await until(pilot, lambda: "has no ask rule Bash(rm:*)" in notices(app))
        await pilot.press(*"/permissions remove deny Bash(rm:*) --local", "enter")
        await until(pilot, lambda: "it no longer applies" in notices(app))
        assert rules(app) == []
        assert json.loads(local.read_text()) == {"permissions": {"deny": []}}


async def test_a_broken_settings_file_is_never_overwritten(project: Path):
    shared = project / ".proctor" / "settings.json"
    shared.parent.mkdir()
    broken = '{"permissions": {"allow": ["Read",]}}'
    shared.write_text(broken)
    app = make_app(project, [[text("ok")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        before = rules(app)
        await pilot.press(*"/permissions deny Bash(rm:*) --project", "enter")
        await until(pilot, lambda: "no rule was added" in notices(app))
        assert "not valid JSON" in notices(app) and str(shared) in notices(app)
        assert shared.read_text() == broken and rules(app) == before


async def test_a_rule_is_not_written_through_a_proctor_folder_linked_out_of_the_project(
    project: Path, tmp_path: Path
):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".proctor").symlink_to(elsewhere)
    app = make_app(project, [[text("ok")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        before = rules(app)
        await pilot.press(*"/permissions allow Bash(curl:*) --project", "enter")
        await until(pilot, lambda: "no rule was added" in notices(app))
        assert "outside the project" in notices(app)
        assert list(elsewhere.iterdir()) == [] and rules(app) == before
