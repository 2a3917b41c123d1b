"""The modal dialogs (permission, plan, question, trust, help) driven as a person would.

Each dialog is pushed on a small host app with a callback that records what it dismissed
with; the tests press keys through Pilot and check the closed value that comes back, and
what the dialog shows. Snapshots pin the look at 100x34.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dialog_helpers import (
    SIZE,
    Host,
    answer,
    bash_dialog,
    bash_request,
    edit_request,
    plan_dialog,
    question_request,
    text_of,
)
from textual import work
from textual.widgets import Button, Input, OptionList, Static

from core.access.decision import DecidedBy
from core.ports import (
    Answers,
    Approve,
    KeepPlanning,
    PermissionRequest,
    PlanApproved,
    QuestionRequest,
    Reject,
)
from core.settings.read import load_settings
from core.tools.files import edit_preview, write_preview
from core.tools.notebook_edit import NotebookEdit
from tui.screens.permission import ApproveAll, PermissionScreen, risk_of
from tui.screens.question import QuestionScreen
from tui.screens.question_widgets import OptionButton, PickMany
from tui.screens.trust import TrustScreen
from tui.trust_findings import trust_findings

# --- permission ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["y"], Approve("once")),
        (["a"], Approve("always", rule="Bash(npm test:*)")),
        (["s"], Approve("session", rule="Bash(npm test:*)")),
        (["escape"], Reject()),
        (["n", *"use pnpm", "enter"], Reject(feedback="use pnpm")),
        (["n", "enter"], Reject(feedback=None)),
        (["enter"], Approve("once")),
        (["down", "enter"], Approve("always", rule="Bash(npm test:*)")),
    ],
)
async def test_permission_keys_return_the_closed_answer(keys: list[str], expected: object):
    assert await answer(bash_dialog(), keys) == [expected]


async def test_feedback_input_takes_letters_not_choices_and_esc_goes_back():
    app = Host(bash_dialog())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        feedback = app.screen.query_one("#feedback", Input)
        assert feedback.has_focus and feedback.display
        await pilot.press("y", "a", "s")  # typed, not approving
        assert app.results == [] and feedback.value == "yas"
        await pilot.press("escape")
        assert not feedback.display and app.screen.query_one("#choices", OptionList).has_focus
        assert app.results == []
        await pilot.press("s")
    assert app.results == [Approve("session", rule="Bash(npm test:*)")]


async def test_a_command_without_a_rule_to_keep_gets_no_session_wide_yes():
    """A session-wide yes with nothing narrow to keep would allow every command."""
    app = Host(bash_dialog(suggestions=()))
    async with app.run_test(size=SIZE) as pilot:
        choices = app.screen.query_one("#choices", OptionList)
        ids = [choices.get_option_at_index(i).id for i in range(choices.option_count)]
        assert ids == ["once", "reject"]
        await pilot.press("a")  # nothing to remember: ignored
        await pilot.press("s")  # nor for the session
        assert app.results == []
        await pilot.press("y")
    assert app.results == [Approve("once")]


async def test_the_session_choice_names_what_it_keeps():
    app = Host(bash_dialog())
    async with app.run_test(size=SIZE):
        choices = app.screen.query_one("#choices", OptionList)
        labels = [str(choices.get_option_at_index(i).prompt) for i in range(choices.option_count)]
        assert any("for this session: Bash(npm test:*)" in label for label in labels), labels


async def test_the_suggested_rule_is_shown_in_the_always_choice():
    app = Host(bash_dialog())
    async with app.run_test(size=SIZE):
        choices = app.screen.query_one("#choices", OptionList)
        prompt = str(choices.get_option("always").prompt)
        assert "don't ask again for Bash(npm test:*)" in prompt


async def test_one_of_n_is_live_and_allow_all_appears_only_when_several_wait():
    dialog = bash_dialog()
    app = Host(dialog)
    async with app.run_test(size=SIZE) as pilot:
        assert "of" not in text_of(dialog, "#title")
        await pilot.press("A")  # one call waits: nothing to allow all of
        assert app.results == []
        dialog.set_waiting(3)
        await pilot.pause()
        assert "1 of 3" in text_of(dialog, "#title")
        assert "Allow all 3" in str(
            dialog.query_one("#choices", OptionList).get_option("all").prompt
        )
        await pilot.press("A")
    assert app.results == [ApproveAll()]


async def test_bash_shows_the_command_the_description_and_why():
    dialog = bash_dialog()
    app = Host(dialog)
    async with app.run_test(size=SIZE):
        assert "npm test -- --watch=false" in dialog.query_one("#command", Static).content.code
        assert text_of(dialog, "#description") == "Run the test suite"
        assert "does not treat as read-only" in text_of(dialog, "#message")
        assert text_of(dialog, "#why") == "Asked by the command check: the command runs `npm`."


async def test_highlighting_follows_the_theme():
    dialog = bash_dialog()
    app = Host(dialog)
    async with app.run_test(size=SIZE) as pilot:
        app.theme = "textual-dark"
        await pilot.pause()
        assert dialog.syntax_theme == "monokai"
        before = dialog.query_one("#command", Static)
        app.theme = "textual-light"
        await pilot.pause()
        assert dialog.syntax_theme == "friendly"
        after = dialog.query_one("#command", Static)
        assert after is not before and "npm test" in after.content.code


async def test_notebook_edit_shows_the_cell_it_would_write():
    input = {"notebook_path": "/project/a.ipynb", "cell_id": 3, "new_source": "x = compute()"}
    tool = NotebookEdit()
    request = PermissionRequest(
        "toolu_8",
        "NotebookEdit",
        input,
        "a.ipynb",
        "NotebookEdit would change /project/a.ipynb.",
        DecidedBy("default", "no rule allows it"),
        preview=tool.change_preview(tool.parse_input(input), Path("/project")),
    )
    dialog = PermissionScreen(request, cwd=Path("/project"))
    app = Host(dialog)
    async with app.run_test(size=SIZE):
        assert "+x = compute()" in text_of(dialog, "#diff")
        assert text_of(dialog, "#path") == "a.ipynb  (replace cell 3)"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "greet.py").write_text(
        'def greet(name):\n    return "hello " + name\n\n\nprint(greet("world"))\n'
    )
    return tmp_path


async def test_edit_shows_a_diff_of_the_file_with_the_new_line(project: Path):
    request = edit_request(
        str(project / "src" / "greet.py"),
        'return "hello " + name',
        'return f"Hello, {name}!"',
        cwd=project,
    )
    dialog = PermissionScreen(request, cwd=project)
    app = Host(dialog)
    async with app.run_test(size=SIZE) as pilot:
        diff = text_of(dialog, "#diff")
        assert '-    return "hello " + name' in diff
        assert '+    return f"Hello, {name}!"' in diff
        assert "def greet(name):" in diff  # context from the file on disk
        assert text_of(dialog, "#path") == "src/greet.py"
        await pilot.press("a")
    assert app.results == [Approve("always", rule="Edit(src/**)")]


def test_edit_diff_replace_all_and_unreadable_fallback(project: Path):
    path = project / "src" / "greet.py"
    path.write_text("a = 1\nb = a\nc = a\n")
    every = edit_preview(str(path), "a", "x", True, project).lines
    assert "+c = x" in every and "+b = x" in every
    missing = edit_preview("gone.py", "old()", "new()", False, project).lines
    assert missing[-2:] == ("-old()", "+new()")


def test_write_diff_new_file_and_existing_file(project: Path):
    preview = write_preview("notes.txt", "one\ntwo\n", project)
    assert preview.note == "new file, 2 lines" and "+two" in preview.lines
    preview = write_preview(str(project / "src" / "greet.py"), "print('hi')\n", project)
    assert preview.note == "replaces the file"
    assert "+print('hi')" in preview.lines and "-def greet(name):" in preview.lines


async def test_without_a_preview_the_dialog_shows_the_input_and_reads_no_file(project: Path):
    """The UI thread never opens the file: with no preview from the engine, the input."""
    request = edit_request(str(project / "src" / "greet.py"), "name", "who")
    dialog = PermissionScreen(request, cwd=project)
    async with Host(dialog).run_test(size=SIZE):
        shown = json.loads(dialog.query_one("#json", Static).content.code)
        assert shown["old_string"] == "name" and shown["new_string"] == "who"
        assert "def greet" not in dialog.query_one("#json", Static).content.code


async def test_other_tools_show_their_input_as_json_and_a_sub_agent_label():
    request = PermissionRequest(
        "toolu_3",
        "WebFetch",
        {"url": "https://example.com", "prompt": "summarise"},
        "example.com",
        "WebFetch reaches example.com, outside the working directories.",
        DecidedBy("default", "reaches example.com"),
        ("WebFetch(domain:example.com)",),
        agent_label="explorer",
        risk="high",
    )
    dialog = PermissionScreen(request, cwd=Path("/project"))
    app = Host(dialog)
    async with app.run_test(size=SIZE):
        assert (
            json.loads(dialog.query_one("#json", Static).content.code)["url"]
            == "https://example.com"
        )
        assert text_of(dialog, "#agent") == "asked by explorer"
        assert dialog.query_one("#dialog").has_class("-risk-high")
    assert risk_of(request) == "high" and risk_of(bash_request()) == "medium"


async def test_the_app_can_await_the_dialog_from_a_worker():
    """How the TUI's PermissionPort answers: push_screen_wait inside a worker."""

    class PortHost(Host):
        def on_mount(self) -> None:  # Host.on_mount runs too, and pushes nothing
            self.ask()

        @work
        async def ask(self) -> None:
            self.results.append(await self.push_screen_wait(bash_dialog()))

    app = PortHost(None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("y")
        await app.workers.wait_for_complete()
    assert app.results == [Approve("once")]


# --- plan ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["1"], PlanApproved("acceptEdits")),
        (["enter"], PlanApproved("acceptEdits")),
        (["2"], PlanApproved("default")),
        (["3", *"also lint", "enter"], KeepPlanning("also lint")),
        (["escape"], KeepPlanning("")),
        (["3", "escape", "2"], PlanApproved("default")),
    ],
)
async def test_plan_keys(keys: list[str], expected: object):
    assert await answer(plan_dialog(), keys) == [expected]


async def test_plan_shows_markdown_path_and_allowed_prompts():
    dialog = plan_dialog()
    app = Host(dialog)
    async with app.run_test(size=SIZE):
        assert "Make greetings friendlier" in dialog.query_one("#plan-markdown").source
        assert text_of(dialog, "#plan-path") == "/plans/friendly-greetings.md"
        assert text_of(dialog, "#prompts") == "The plan asks to: run tests (Bash)"


# --- question --------------------------------------------------------------------------------


RUNNER, CHECKS = "Which test runner should the project use?", "Which checks should run in CI?"


async def test_questions_single_and_multi_select():
    dialog = QuestionScreen(question_request())
    app = Host(dialog)
    async with app.run_test(size=SIZE) as pilot:
        submit = dialog.query_one("#submit", Button)
        assert submit.disabled
        await pilot.press("enter")  # picks pytest, and goes on to the open question
        await pilot.pause()
        assert dialog.query_one("#choices-1").has_focus and app.results == []
        await pilot.press("enter", "down", "down", "enter")  # ticks ruff and pytest
        await pilot.pause()
        assert not submit.disabled and app.results == []  # ticking never submits
        await pilot.click("#submit")
    assert app.results == [Answers({RUNNER: "pytest", CHECKS: "ruff, pytest"})]


async def test_questions_other_text_wins_and_submit_waits_for_every_answer():
    dialog = QuestionScreen(question_request())
    app = Host(dialog)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("tab", *"nose2", "enter")  # the second question is still open
        await pilot.pause()
        assert app.results == [] and dialog.query_one("#submit", Button).disabled
        assert dialog.query_one("#choices-1").has_focus  # enter went on to it
        await pilot.press("enter", "tab", *"  ", "enter")  # ruff; a blank other is ignored
    assert app.results == [Answers({RUNNER: "nose2", CHECKS: "ruff"})]


def one_question() -> QuestionScreen:
    return QuestionScreen(
        QuestionRequest("toolu_6", (question_request().questions[0],), agent_label="explorer")
    )


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["enter"], "pytest"),
        (["down", "enter"], "unittest"),
        (["down", "down", "enter"], "pytest"),  # round again
        (["space", "down", "space", "ctrl+s"], "unittest"),  # space marks, ctrl+s submits
        (["tab", *"nose2", "enter"], "nose2"),
    ],
)
async def test_a_single_choice_is_submitted_with_enter(keys: list[str], expected: str):
    assert await answer(one_question(), keys) == [Answers({RUNNER: expected})]


async def test_enter_in_an_empty_other_box_goes_back_to_the_open_question():
    dialog = one_question()
    app = Host(dialog)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert app.results == [] and dialog.query_one("#choices-0").has_focus


async def test_the_chosen_option_is_marked_with_a_shape_not_only_a_colour():
    dialog = QuestionScreen(question_request())
    app = Host(dialog)
    async with app.run_test(size=SIZE) as pilot:
        buttons = list(dialog.query_one("#choices-0").query(OptionButton))
        ticks = dialog.query_one("#choices-1", PickMany)

        def marks() -> list[str]:
            radios = [str(button.render()).split()[0][1] for button in buttons]
            return radios + [ticks.render_line(y).text[1] for y in range(3)]

        def cursors() -> list[bool]:
            radios = [str(button.render())[3] == "›" for button in buttons]
            return radios + [ticks.render_line(y).text[3] == "›" for y in range(3)]

        assert marks() == ["○", "○", " ", " ", " "]
        assert cursors() == [True, False, True, False, False]
        await pilot.press("down", "space")  # unittest
        await pilot.press("tab", "tab", "down", "space")  # mypy
        await pilot.pause()
        assert marks() == ["○", "●", " ", "✓", " "]
        assert cursors() == [False, True, False, True, False]  # where enter would act


async def test_the_question_dialog_says_its_keys():
    app = Host(QuestionScreen(question_request()))
    async with app.run_test(size=SIZE):
        keys = text_of(app.screen, "#keys")
        for words in ("enter pick", "space tick", "tab next", "ctrl+s submit", "esc decline"):
            assert words in keys, keys
    app = Host(one_question())
    async with app.run_test(size=SIZE):
        assert "space" not in text_of(app.screen, "#keys")  # no question has ticks


async def test_questions_escape_declines():
    assert await answer(QuestionScreen(question_request()), ["enter", "escape"]) == [None]


async def test_escape_in_an_other_box_goes_back_to_the_options_first():
    dialog = one_question()
    app = Host(dialog)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("tab", *"nose", "escape")
        await pilot.pause()
        assert app.results == [] and dialog.query_one("#choices-0").has_focus
        assert dialog.query_one("#other-0", Input).value == "nose"  # nothing lost
        await pilot.press("escape")
    assert app.results == [None]


# --- trust -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "expected"), [(["y"], True), (["enter"], True), (["n"], False), (["escape"], False)]
)
async def test_trust_keys(keys: list[str], expected: bool):
    assert await answer(TrustScreen(Path("/work/cloned"), ["x"]), keys) == [expected]


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PROCTOR_NO_CLAUDE_SETTINGS", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    return project


def test_trust_findings_lists_hooks_rules_and_directories(isolated_home: Path):
    project = isolated_home
    (project / ".proctor").mkdir()
    hook = {"hooks": [{"type": "command", "command": "./check.sh"}]}
    (project / ".proctor" / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {"PreToolUse": [{"matcher": "Bash", **hook}], "Stop": [hook]},
                "permissions": {
                    "allow": ["Bash(npm test:*)", "Edit"],
                    "deny": ["Bash(rm:*)"],
                    "additionalDirectories": ["../shared"],
                    "defaultMode": "acceptEdits",
                },
            }
        )
    )
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text("{}")
    findings = trust_findings(load_settings(project), project)
    assert findings == [
        ".proctor/settings.json: 2 hooks (PreToolUse, Stop), "
        "2 allow rules (Bash(npm test:*), Edit), 1 deny rule (Bash(rm:*)), "
        "1 additional directory, default mode acceptEdits",
        ".claude/settings.local.json: settings (no hooks or rules)",
    ]


def test_trust_findings_lists_the_mcp_servers_a_project_would_start(isolated_home: Path):
    project = isolated_home
    (project / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "github": {"command": "npx", "args": ["-y", "server-github"]},
                    "docs": {"type": "http", "url": "https://docs.example/mcp"},
                    "shadowed": {"command": "./from-mcp-json"},
                }
            }
        )
    )
    (project / ".proctor").mkdir()
    (project / ".proctor" / "settings.json").write_text(
        json.dumps({"mcpServers": {"shadowed": {"command": "./wins"}}})
    )
    findings = trust_findings(load_settings(project), project)
    assert findings == [
        ".proctor/settings.json: 1 MCP server (shadowed: ./wins)",
        ".mcp.json: 2 MCP servers (docs: https://docs.example/mcp; github: npx -y server-github)",
    ]
    (project / ".mcp.json").write_text('{"mcpServers": {}}')
    assert trust_findings(load_settings(project), project)[1] == ".mcp.json: no MCP servers"


def test_trust_findings_is_empty_without_project_settings(isolated_home: Path):
    config = Path(isolated_home.parent / "config")
    config.mkdir()
    (config / "settings.json").write_text('{"permissions": {"allow": ["Read"]}}')
    settings = load_settings(isolated_home)
    assert settings.files  # the user's own file is read ...
    assert trust_findings(settings, isolated_home) == []  # ... and is not the project's


def test_trust_findings_list_the_projects_skills(isolated_home: Path):
    # A project with nothing but a skill is still asked about: its description would be in
    # the model's prompt (red team).
    from core.agent.skills import project_skill_files

    skill = isolated_home / ".claude" / "skills" / "setup" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: setup\ndescription: d\n---\nbody\n")
    settings = load_settings(isolated_home)
    files = project_skill_files(isolated_home)
    assert trust_findings(settings, isolated_home, None, files) == [
        ".claude/skills/setup/SKILL.md: a skill offered to the agent"
    ]


async def test_trust_screen_lists_the_findings():
    dialog = TrustScreen(Path("/work/cloned"), [".proctor/settings.json: 1 hook (Stop)"])
    app = Host(dialog)
    async with app.run_test(size=SIZE):
        assert "/work/cloned" in text_of(dialog, "#title")
        assert ".proctor/settings.json: 1 hook (Stop)" in text_of(dialog, "#findings")


# --- snapshots -------------------------------------------------------------------------------


def test_snapshot_permission_bash_one_of_two(snap_compare):
    dialog = PermissionScreen(bash_request(), cwd=Path("/project"), waiting=2)
    assert snap_compare(Host(dialog), terminal_size=SIZE)


def test_snapshot_permission_edit_diff(snap_compare, tmp_path: Path):
    project = tmp_path / "p"
    (project / "src").mkdir(parents=True)
    (project / "src" / "greet.py").write_text(
        'def greet(name):\n    return "hello " + name\n\n\nprint(greet("world"))\n'
    )
    request = edit_request(
        "src/greet.py", 'return "hello " + name', 'return f"Hello, {name}!"', cwd=project
    )
    assert snap_compare(Host(PermissionScreen(request, cwd=project)), terminal_size=SIZE)


def test_snapshot_plan(snap_compare):
    assert snap_compare(Host(plan_dialog()), terminal_size=SIZE)


def test_snapshot_question(snap_compare):
    assert snap_compare(Host(QuestionScreen(question_request())), terminal_size=SIZE)


def test_snapshot_trust(snap_compare):
    findings = [
        ".proctor/settings.json: 2 hooks (PreToolUse, Stop), 1 allow rule (Bash(npm test:*))",
        ".claude/settings.json: 1 additional directory",
    ]
    assert snap_compare(Host(TrustScreen(Path("/work/cloned"), findings)), terminal_size=SIZE)


def test_trust_is_asked_when_your_own_servers_would_start_in_the_project(isolated_home: Path):
    project = isolated_home
    config = project.parent / "config"
    config.mkdir()
    servers = {
        "github": {"command": "npx", "args": ["-y", "server-github"]},
        "pinned": {"command": "python3", "args": ["server.py"], "cwd": "/srv/mcp"},
        "docs": {"type": "http", "url": "https://docs.example/mcp"},
    }
    (config / "settings.json").write_text(json.dumps({"mcpServers": servers}))
    findings = trust_findings(load_settings(project), project)
    assert findings == [
        "your 1 MCP server would start in this folder, where its files can change what runs "
        "(github: npx -y server-github); untrusted, they start beside your settings"
    ]
