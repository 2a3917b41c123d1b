"""Which sandbox a command gets: the policy travels on the decision, and through the executor
to the command. Decisions are checked against the chain itself; the end-to-end tests run the
commands for real and look at what happened."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_helpers import (
    SUPPORT,
    Fenced,
    exists,
    make_fenced,
    needs_sandbox,
    repository_running,
)

from core.access.context import PermissionMode, ToolPermissionContext
from core.access.decision import Allow, Ask, DecidedBy, Deny, PermissionDecision
from core.access.rules import parse_rule
from core.access.sandbox_policy import ReadOnly, Unsandboxed, Workspace
from core.events import ToolCompleted, ToolSandboxed
from core.hooks import NO_PRE_OUTCOME
from core.permissions.decide import evaluate, prepare
from core.permissions.sandboxing import SandboxView
from core.ports import Approve, Reject
from core.sandbox.support import SandboxSupport
from core.settings.sandbox import SandboxSettings
from core.tools.bash import Bash
from core.tools.read import Read

BASH = Bash()
WORKING = SandboxSupport(landlock_abi=7, namespaces=True, seccomp=True, problem=None)
MISSING = SandboxSupport(problem="this kernel has no Landlock (test)")


def decide(
    command: str,
    *,
    mode: PermissionMode = "default",
    rules: tuple[str, ...] = (),
    settings: SandboxSettings | None = None,
    support: SandboxSupport = WORKING,
    cwd: Path = Path("/work/project"),
    **more: object,
) -> PermissionDecision:
    parsed_rules = tuple(
        parse_rule(text.split(" ", 1)[1], text.split(" ", 1)[0], source="cli")  # type: ignore[arg-type]
        for text in rules
    )
    permissions = ToolPermissionContext(
        mode=mode, rules=parsed_rules, bypass_available=mode == "bypassPermissions"
    )
    parsed = BASH.parse_input({"command": command, **more})
    view = SandboxView(settings or SandboxSettings(), support)
    return evaluate(prepare(BASH, parsed, cwd, permissions), NO_PRE_OUTCOME, sandbox=view)


def test_a_read_only_command_runs_in_the_read_only_sandbox():
    for mode in ("default", "acceptEdits", "plan", "dontAsk"):
        decision = decide("ls -la src", mode=mode)  # type: ignore[arg-type]
        assert isinstance(decision, Allow)
        assert isinstance(decision.sandbox, ReadOnly), mode


def test_accept_edits_file_commands_run_in_the_workspace_sandbox():
    decision = decide("mkdir build && touch build/x", mode="acceptEdits")
    assert isinstance(decision, Allow) and isinstance(decision.sandbox, Workspace)


def test_what_a_person_allowed_runs_outside_unless_sandbox_approved():
    decision = decide("npm test", rules=("allow Bash(npm test:*)",))
    assert isinstance(decision, Allow) and isinstance(decision.sandbox, Unsandboxed)
    kept = decide(
        "npm test",
        rules=("allow Bash(npm test:*)",),
        settings=SandboxSettings(sandbox_approved=True),
    )
    assert isinstance(kept, Allow) and isinstance(kept.sandbox, Workspace)
    asked = decide("npm install", settings=SandboxSettings(sandbox_approved=True))
    assert isinstance(asked, Ask) and isinstance(asked.sandbox, Workspace)


def test_bypass_runs_outside():
    decision = decide("ls", mode="bypassPermissions")
    assert isinstance(decision, Allow) and isinstance(decision.sandbox, Unsandboxed)


def test_an_ask_says_a_yes_runs_outside():
    decision = decide("npm install")
    assert isinstance(decision, Ask)
    assert isinstance(decision.sandbox, Unsandboxed)


def test_auto_allow_if_sandboxed_runs_without_asking_in_the_workspace():
    auto = SandboxSettings(auto_allow_bash_if_sandboxed=True)
    decision = decide("npm install", settings=auto)
    assert isinstance(decision, Allow) and isinstance(decision.sandbox, Workspace)
    assert decision.decided_by.kind == "sandbox"
    # Rules that ask still ask; plan mode still refuses changes; no sandbox, no auto-allow.
    assert isinstance(decide("npm install", settings=auto, rules=("ask Bash(npm:*)",)), Ask)
    assert isinstance(decide("npm install", settings=auto, mode="plan"), Deny)
    assert isinstance(decide("npm install", settings=auto, support=MISSING), Ask)
    assert isinstance(decide("rm -rf x", settings=auto, rules=("deny Bash(rm:*)",)), Deny)


def test_leaving_the_sandbox_always_asks():
    for rules in ((), ("allow Bash(ls:*)",), ("allow Bash",)):
        decision = decide("ls", rules=rules, dangerously_disable_sandbox=True)
        assert isinstance(decision, Ask), rules
        assert "WITHOUT the sandbox" in decision.message
        assert isinstance(decision.sandbox, Unsandboxed)
    bypass = decide("ls", mode="bypassPermissions", dangerously_disable_sandbox=True)
    assert isinstance(bypass, Allow) and isinstance(bypass.sandbox, Unsandboxed)
    refused = decide(
        "ls",
        dangerously_disable_sandbox=True,
        settings=SandboxSettings(allow_unsandboxed_commands=False),
    )
    assert isinstance(refused, Deny) and "allowUnsandboxedCommands" in refused.message
    assert refused.message.startswith("Running a command outside the sandbox is turned off")
    assert refused.decided_by.kind == "sandbox"


def test_leaving_the_sandbox_asks_as_a_high_risk_keeping_the_rule_to_offer():
    """The question says both why the command asks and that it leaves the sandbox, offers
    the same narrow rule, and what runs is marked as approved to leave."""
    decision = decide("npm install", dangerously_disable_sandbox=True)
    assert isinstance(decision, Ask) and decision.risk == "high"
    assert decision.suggestions == ("Bash(npm install:*)",)
    assert decision.message.endswith(
        "It asks to run WITHOUT the sandbox (dangerously_disable_sandbox), which always asks."
    )
    assert len(decision.message) > len("It asks to run WITHOUT the sandbox") + 80
    assert decision.sandbox == Unsandboxed("approved to leave the sandbox")
    read_only = decide("ls", dangerously_disable_sandbox=True)
    assert isinstance(read_only, Ask) and read_only.suggestions == ()
    assert read_only.message.startswith("It asks to run WITHOUT the sandbox")
    bypass = decide("ls", mode="bypassPermissions", dangerously_disable_sandbox=True)
    assert bypass.sandbox == Unsandboxed("bypass permissions mode")
    assert isinstance(
        decide("rm x", rules=("deny Bash(rm:*)",), dangerously_disable_sandbox=True), Deny
    )


def test_excluded_commands_are_never_run_on_the_analysis_alone():
    excluded = SandboxSettings(excluded_commands=("ls",))
    decision = decide("ls -la", settings=excluded)
    assert isinstance(decision, Ask) and "excludedCommands" in decision.message
    assert isinstance(decision.sandbox, Unsandboxed)
    auto = SandboxSettings(excluded_commands=("npm",), auto_allow_bash_if_sandboxed=True)
    assert isinstance(decide("npm install", settings=auto), Ask)
    assert isinstance(decide("cat x && ls", settings=excluded), Ask)


def test_without_a_sandbox_commands_run_as_before_and_say_why():
    decision = decide("ls", support=MISSING)
    assert isinstance(decision, Allow) and isinstance(decision.sandbox, Unsandboxed)
    assert "no Landlock" in decision.sandbox.why
    off = decide("ls", settings=SandboxSettings(enabled=False))
    assert isinstance(off, Allow) and "switched off" in off.sandbox.why  # type: ignore[union-attr]


def test_fail_if_unavailable_refuses_every_command():
    required = SandboxSettings(fail_if_unavailable=True)
    for command, mode in (("ls", "default"), ("npm test", "bypassPermissions")):
        decision = decide(command, mode=mode, settings=required, support=MISSING)  # type: ignore[arg-type]
        assert isinstance(decision, Deny) and "failIfUnavailable" in decision.message
    assert isinstance(decide("ls", settings=required), Allow)


def test_tools_that_run_no_commands_carry_no_policy():
    parsed = Read().parse_input({"file_path": "/work/project/a.txt"})
    permissions = ToolPermissionContext()
    call = prepare(Read(), parsed, Path("/work/project"), permissions)
    decision = evaluate(call, NO_PRE_OUTCOME, sandbox=SandboxView(SandboxSettings(), WORKING))
    assert isinstance(decision, Allow) and decision.sandbox is None


# -- end to end: the decided policy is the one applied -------------------------------------


@pytest.fixture
def git_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fenced:
    return make_fenced(tmp_path, monkeypatch)


@needs_sandbox
async def test_a_read_only_git_command_cannot_run_code_from_the_repository(git_project: Fenced):
    """`git status` is read-only to the analysis, but a repository's core.fsmonitor runs a
    program: the sandbox keeps that program from writing anything."""
    target = git_project.project.parent / "fsmonitor-wrote"
    repository_running(git_project.project, f"touch {target}")
    outcome, text = await git_project.run("git status")
    assert not exists(target)
    assert outcome.sandbox == "read-only"
    sandboxed = [e for e in git_project.recorder.events if isinstance(e, ToolSandboxed)]
    assert [e.policy for e in sandboxed] == ["read-only"]
    completed = [e for e in git_project.recorder.events if isinstance(e, ToolCompleted)]
    assert completed[-1].sandbox == "read-only"
    # The repository's program is not even started: read-only git runs none.
    assert "touch" not in text and not outcome.is_error, text


@needs_sandbox
async def test_a_yes_runs_outside_the_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    fenced = make_fenced(tmp_path, monkeypatch, answers=[Approve()])
    target = fenced.project.parent / "approved-wrote"
    outcome, text = await fenced.run(f"touch {target}")
    assert exists(target), text
    assert outcome.sandbox == "none"
    [request] = fenced.port.requests
    assert request.sandbox == "outside the sandbox"


@needs_sandbox
async def test_an_approved_leave_runs_outside_and_a_refused_one_does_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    fenced = make_fenced(tmp_path, monkeypatch, answers=[Reject(), Approve()])
    target = fenced.project.parent / "left"
    await fenced.run(f"ls > /dev/null; touch {target}", dangerously_disable_sandbox=True)
    assert not exists(target)
    outcome, _ = await fenced.run(f"touch {target}", dangerously_disable_sandbox=True)
    assert exists(target) and outcome.sandbox == "none"
    assert all("WITHOUT the sandbox" in r.message for r in fenced.port.requests)


@needs_sandbox
async def test_auto_allowed_commands_run_in_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    settings = SandboxSettings(auto_allow_bash_if_sandboxed=True)
    fenced = make_fenced(tmp_path, monkeypatch, settings=settings)
    outside = fenced.project.parent / "auto-wrote"
    outcome, _text = await fenced.run(f"touch made-here && touch {outside}")
    assert outcome.sandbox == "workspace"
    assert exists(fenced.project / "made-here")
    assert not exists(outside)
    assert fenced.port.requests == []


@needs_sandbox
async def test_a_missing_sandbox_with_fail_if_unavailable_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    settings = SandboxSettings(fail_if_unavailable=True)
    fenced = make_fenced(tmp_path, monkeypatch, settings=settings, support=MISSING)
    outcome, text = await fenced.run("ls")
    assert outcome.is_error and "failIfUnavailable" in text


@needs_sandbox
async def test_the_fallback_runs_commands_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    fenced = make_fenced(tmp_path, monkeypatch, support=MISSING)
    outcome, text = await fenced.run("cat .env")
    assert outcome.sandbox == "none" and "CANARY-DOTENV" in text
    assert fenced.sandbox.status() == "sandbox: off — this kernel has no Landlock (test)"


def test_the_status_line_says_how_strong_the_sandbox_is():
    from core.permissions.session_sandbox import SessionSandbox

    def status(support: SandboxSupport, **settings: bool) -> str:
        sandbox = SessionSandbox(SandboxSettings(**settings), project=Path("/p"), support=support)
        return sandbox.status()

    assert status(WORKING) == "sandbox: files+net"
    before_the_probe = SessionSandbox(SandboxSettings(), project=Path("/p"))
    assert before_the_probe.status() == "sandbox: checking…"
    landlock_only = SandboxSupport(landlock_abi=3, problem=None)
    assert status(landlock_only) == "sandbox: files only (no network isolation here)"
    assert status(WORKING, enabled=False).startswith("sandbox: off — switched off")
    assert status(MISSING, fail_if_unavailable=True).endswith(
        "(commands are refused: failIfUnavailable)"
    )
    assert SUPPORT.probe_ms >= 0


def test_unattended_runs_that_trust_the_fence_run_in_the_workspace():
    auto = SandboxSettings(auto_allow_bash_if_sandboxed=True)
    decision = decide("npm install", mode="dontAsk", settings=auto)
    assert isinstance(decision, Allow) and isinstance(decision.sandbox, Workspace)
    assert isinstance(decide("npm install", mode="dontAsk"), Deny)
    excluded = SandboxSettings(auto_allow_bash_if_sandboxed=True, excluded_commands=("npm",))
    assert isinstance(decide("npm install", mode="dontAsk", settings=excluded), Deny)


def test_an_excluded_command_is_found_behind_wrappers():
    excluded = SandboxSettings(excluded_commands=("cat",))
    for command in ("timeout 5 cat x", "env LANG=C cat x", "nice cat x"):
        assert isinstance(decide(command, settings=excluded), Ask), command


async def test_without_a_sandbox_read_only_git_still_runs_no_repository_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    fenced = make_fenced(tmp_path, monkeypatch, support=MISSING)
    repository_running(fenced.project, "echo FSMONITOR-RAN >&2")
    outcome, text = await fenced.run("git status")
    assert outcome.sandbox == "none"
    assert "FSMONITOR-RAN" not in text, text
    approved = make_fenced(tmp_path / "b", monkeypatch, support=MISSING, answers=[Approve()])
    repository_running(approved.project, "echo FSMONITOR-RAN >&2")
    _, text = await approved.run("git status && touch x")  # asked, approved: as the user runs it
    assert "FSMONITOR-RAN" in text


async def test_a_session_yes_without_a_rule_keeps_no_rule_for_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Keeping the whole tool would allow every command: the yes counts once."""
    from core.access.decision import DecidedBy
    from core.permissions.decide import DecisionChain
    from core.ports import PermissionRequest

    fenced = make_fenced(tmp_path, monkeypatch)
    context = fenced.context()

    def request(tool: str, sandbox: str | None) -> PermissionRequest:
        return PermissionRequest(
            "t", tool, {}, "", "asks", DecidedBy("default", "x"), (), None, sandbox
        )

    chain = DecisionChain()
    await chain.record_answer(request("Bash", "outside the sandbox"), Approve("session"), context)
    assert context.permission_context.rules == ()
    await chain.record_answer(request("WebFetch", None), Approve("session"), context)
    assert [str(rule) for rule in context.permission_context.rules] == ["WebFetch"]


def test_each_fence_says_why_it_was_chosen():
    """The conversation and `proctor check` show why a command runs fenced or not."""
    excluded = SandboxSettings(excluded_commands=("ls",))
    cases = [
        (decide("npm install", mode="bypassPermissions"), "bypass permissions mode"),
        (
            decide("npm install", rules=("allow Bash(npm install:*)",)),
            "allowed by the allow rule Bash(npm install:*) (cli)",
        ),
        (decide("ls -la", settings=excluded), "approved, and excluded from the sandbox"),
        (
            decide("ls -la", settings=excluded, rules=("allow Bash(ls:*)",)),
            "allowed by the allow rule Bash(ls:*) (cli); ls is in sandbox.excludedCommands",
        ),
        (decide("mkdir build", mode="acceptEdits"), "accept edits mode"),
    ]
    for decision, why in cases:
        assert decision.sandbox is not None and decision.sandbox.why == why
    asked = decide("ls -la", settings=excluded)
    assert asked.decided_by == DecidedBy("sandbox", "ls is in sandbox.excludedCommands")
    assert asked.message.endswith("asked about rather than run on the analysis alone.")
