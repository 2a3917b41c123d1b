"""A shell command's relative paths are judged from where its parts run: the directory the
shell was left in by an earlier call, and every place a `cd` in the command may lead. So
`cd sub && ls` inside the project runs without asking, and neither `cd .. && cat x` nor a
shell left in /tmp can pass a path outside off as one inside."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import close_sessions, make_context

from core.access.context import PermissionMode, ToolPermissionContext
from core.access.decision import Allow, Ask, Deny, PermissionDecision
from core.access.rules import parse_rule
from core.hooks import NO_PRE_OUTCOME
from core.permissions.decide import DecisionChain, evaluate, prepare
from core.tools.bash import Bash

TOOL = Bash()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "sub" / "notes.txt").write_text("notes\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    (root / "sub" / "out").symlink_to(tmp_path)
    return root


def decide(
    command: str,
    project: Path,
    *rules: str,
    mode: PermissionMode = "default",
    start: Path | None = None,
) -> PermissionDecision:
    parsed = tuple(parse_rule(r.split(" ", 1)[1], r.split(" ", 1)[0]) for r in rules)  # type: ignore[arg-type]
    permissions = ToolPermissionContext(mode=mode, rules=parsed)
    call = prepare(TOOL, TOOL.parse_input({"command": command}), project, permissions, start)
    return evaluate(call, NO_PRE_OUTCOME)


@pytest.mark.parametrize(
    "command",
    [
        "cd sub && ls",
        "cd sub; ls -la deep",
        "cd sub && cat notes.txt && cd deep && pwd",
        "cd ./sub/deep && ls ..",
        "cd sub/deep && cd .. && cat notes.txt",
        "cd -P sub && git status",
    ],
)
def test_moving_around_inside_the_project_runs_without_asking(command: str, project: Path):
    assert isinstance(decide(command, project), Allow), command


@pytest.mark.parametrize(
    ("command", "reaches"),
    [
        ("cd .. && ls", "where it runs"),
        ("cd sub && cat ../../outside.txt", "outside.txt"),
        ("cd sub/out && ls", "where it runs"),  # a symlink out of the project
        ("cd sub/out/.. && ls", "where it runs"),  # `..` after the symlink, as the kernel sees it
        ("cd && ls", "where it runs"),  # home
        ("cd /etc && cat hostname", "where it runs"),
        ("cd - && ls", "previous directory"),
        ("cd $DIR && ls", ""),
        ("cd s* && ls", "cannot follow"),
        ("pushd sub && ls", ""),
        # Found by attack: if `cd nowhere` fails, the part after `;` runs where the shell was.
        ("cd nowhere && true; cat ../outside.txt", "outside.txt"),
        ("cd nowhere && true\ncat ../outside.txt", "outside.txt"),
    ],
)
def test_a_cd_that_may_leave_the_project_asks(command: str, reaches: str, project: Path):
    decision = decide(command, project)
    assert isinstance(decision, Ask), (command, decision)
    assert reaches in decision.message, decision.message


def test_every_part_is_judged_from_every_directory_a_cd_may_reach(project: Path):
    # If `cd sub` fails, `cat notes.txt` runs in the project; if it succeeds, in sub: a deny
    # rule on either file holds.
    rule = f"deny Read(/{project}/notes.txt)"
    assert isinstance(decide("cd sub; cat notes.txt", project, rule), Deny)
    rule = f"deny Read(/{project}/sub/notes.txt)"
    assert isinstance(decide("cd sub || cat notes.txt", project, rule), Deny)
    assert isinstance(
        decide(
            "cd /etc && cat hostname",
            project,
            "deny Read(//etc/hostname)",
            mode="bypassPermissions",
        ),
        Deny,
    )


def test_a_shell_left_outside_the_project_makes_reads_ask(project: Path, tmp_path: Path):
    decision = decide("cat outside.txt", project, start=tmp_path)
    assert isinstance(decision, Ask)
    assert str(tmp_path) in decision.message
    assert isinstance(decide("cat notes.txt", project, start=project / "sub"), Allow)


def test_cdpath_makes_a_relative_cd_unknown(project: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CDPATH", "/etc")
    decision = decide("cd sub && ls", project)
    assert isinstance(decision, Ask)
    assert "CDPATH" in decision.message
    assert isinstance(decide("cd ./sub && ls", project), Allow)


async def test_the_chain_judges_from_where_the_last_command_left_the_shell(
    project: Path, tmp_path: Path
) -> None:
    context: Any = make_context([TOOL], project, permission_context=ToolPermissionContext())
    context = context.replace(options=replace(context.options, session_dir=tmp_path / "session"))
    chain = DecisionChain()
    try:
        read = TOOL.parse_input({"command": "cat outside.txt"})  # project/outside.txt
        assert isinstance(await chain.decide(TOOL, read, context, NO_PRE_OUTCOME), Allow)
        # A person approved `cd ..`; the shell stays there for the next command.
        await TOOL.call(TOOL.parse_input({"command": "cd .."}), context, lambda _: None)
        assert TOOL.shell_directory(context) == tmp_path
        decision = await chain.decide(TOOL, read, context, NO_PRE_OUTCOME)
        assert isinstance(decision, Ask)
        assert "where it runs" in decision.message
    finally:
        await close_sessions()


def test_a_part_after_a_semicolon_is_judged_from_where_any_run_before_it_may_stop(
    project: Path,
):
    for command in ("cd nowhere && true; touch ../escaped", "cd sub && cd deep; touch ../../../x"):
        assert isinstance(decide(command, project, mode="acceptEdits"), Ask), command
    decision = decide("cd sub/deep && true; rm -rf ../..", project, mode="bypassPermissions")
    assert isinstance(decision, Ask) and "always asks" in decision.message
    assert isinstance(decide("cd sub && ls; cat notes.txt", project), Allow)


@pytest.mark.parametrize(
    "joined",
    ["; cd {d} || true", " || cd {d}", "\ncd {d} || true"],
)
def test_more_places_than_can_be_followed_ask_and_say_so(project: Path, joined: str):
    many = "cd sub" + "".join(joined.format(d=f"d{i}") for i in range(20)) + "; ls"
    decision = decide(many, project)
    assert isinstance(decision, Ask), many
    assert "changes directory more often than can be followed" in decision.message
    few = "cd sub" + "".join(joined.format(d=f"d{i}") for i in range(3)) + "; ls"
    assert isinstance(decide(few, project), Allow), few
