"""The `sandbox` settings as users write them, and the sandbox in every record of a decision:
the audit log, `proctor check`, and the session's own status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sandbox_helpers import SUPPORT, make_fenced, needs_sandbox

from core.check import Checker, CheckRequest
from core.permissions.audit import AuditLog
from core.permissions.decide import DecisionChain
from core.ports import Approve
from core.registry import all_base_tools
from core.settings.read import load_settings
from core.settings.sandbox import SandboxSettings, merge
from core.settings.values import PROJECT_SOURCES
from core.tool import ToolPool


def write_settings(project: Path, data: object, name: str = "settings.json") -> Path:
    path = project / ".proctor" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_NO_CLAUDE_SETTINGS", "1")


def test_the_sandbox_section_is_read_in_the_seeds_format(tmp_path: Path):
    write_settings(
        tmp_path,
        {
            "sandbox": {
                "enabled": True,
                "autoAllowBashIfSandboxed": True,
                "sandboxApproved": True,
                "excludedCommands": ["docker", "npm run dev"],
                "allowUnsandboxedCommands": False,
                "failIfUnavailable": True,
                "filesystem": {
                    "denyRead": ["~/.aws", "secrets/**"],
                    "allowRead": ["~/.rustup"],
                    "allowWrite": ["/tmp/build-cache"],
                    "denyWrite": ["migrations"],
                },
            }
        },
    )
    settings = load_settings(tmp_path)
    assert settings.problems == ()
    merged, notes = merge(settings.sandbox_layers, trusted=True, project_sources=PROJECT_SOURCES)
    assert notes == ()
    assert merged == SandboxSettings(
        enabled=True,
        auto_allow_bash_if_sandboxed=True,
        sandbox_approved=True,
        allow_unsandboxed_commands=False,
        fail_if_unavailable=True,
        excluded_commands=("docker", "npm run dev"),
        deny_read=("~/.aws", "secrets/**"),
        allow_read=("~/.rustup",),
        allow_write=("/tmp/build-cache",),
        deny_write=("migrations",),
    )


def test_a_sandbox_setting_of_the_wrong_type_fences_more_not_less(tmp_path: Path):
    write_settings(
        tmp_path,
        {
            "sandbox": {
                "allowUnsandboxedCommands": "no",  # meant false: the default would allow
                "autoAllowBashIfSandboxed": 1,
                "failIfUnavailable": "false",
                "filesystem": {"denyRead": "~/.aws"},
            }
        },
    )
    settings = load_settings(tmp_path)
    merged, _ = merge(settings.sandbox_layers, trusted=True, project_sources=PROJECT_SOURCES)
    assert merged.allow_unsandboxed_commands is False
    assert merged.auto_allow_bash_if_sandboxed is False
    assert merged.fail_if_unavailable is False  # "false" says what it means
    assert merged.deny_read == ("~/.aws",)
    said = "\n".join(str(p) for p in settings.problems)
    assert "sandbox.allowUnsandboxedCommands: must be true or false" in said
    assert "not a string ('no'); read as false" in said
    assert "sandbox.filesystem.denyRead: must be a list of paths; read as a list of one" in said


def test_bad_sandbox_settings_are_reported_with_file_and_line(tmp_path: Path):
    path = write_settings(
        tmp_path,
        {
            "sandbox": {
                "enabled": "yes",
                "excludedCommands": "docker",
                "network": {"allowUnixSockets": ["/var/run/docker.sock"]},
                "autoAllow": True,
                "filesystem": {"denyRead": [3, "ok"], "readOnly": []},
            }
        },
    )
    problems = [str(p) for p in load_settings(tmp_path).problems]
    text = "\n".join(problems)
    assert f"{path}:3:" in text and "sandbox.enabled: must be true or false" in text
    assert "sandbox.excludedCommands: must be a list of strings" in text
    assert "sandbox.network: is not supported" in text
    assert "sandbox.autoAllow: is not a sandbox setting" in text
    assert "sandbox.filesystem.denyRead[0]: must be a string" in text
    assert "sandbox.filesystem.readOnly: is not a filesystem setting" in text
    merged, _ = merge(
        load_settings(tmp_path).sandbox_layers, trusted=True, project_sources=PROJECT_SOURCES
    )
    assert merged.deny_read == ("ok",) and merged.enabled is True


def test_a_sandbox_section_that_is_not_an_object_is_reported(tmp_path: Path):
    write_settings(tmp_path, {"sandbox": True})
    [problem] = load_settings(tmp_path).problems
    assert "sandbox: must be an object" in str(problem)


def test_an_untrusted_project_may_tighten_the_sandbox_but_not_loosen_it(tmp_path: Path):
    write_settings(
        tmp_path,
        {
            "sandbox": {
                "enabled": False,
                "autoAllowBashIfSandboxed": True,
                "excludedCommands": ["curl"],
                "failIfUnavailable": True,
                "filesystem": {"denyRead": ["secrets"], "allowWrite": ["/"]},
            }
        },
    )
    layers = load_settings(tmp_path).sandbox_layers
    merged, notes = merge(layers, trusted=False, project_sources=PROJECT_SOURCES)
    assert merged.enabled is True
    assert merged.auto_allow_bash_if_sandboxed is False
    assert merged.excluded_commands == () and merged.allow_write == ()
    assert merged.fail_if_unavailable is True and merged.deny_read == ("secrets",)
    [note] = notes
    assert "allow_write" in note and "until you trust the project" in note
    trusted, _ = merge(layers, trusted=True, project_sources=PROJECT_SOURCES)
    assert trusted.enabled is False and trusted.excluded_commands == ("curl",)


def test_the_highest_source_wins_a_scalar_and_lists_add_up(tmp_path: Path):
    write_settings(tmp_path, {"sandbox": {"sandboxApproved": True, "excludedCommands": ["a"]}})
    write_settings(
        tmp_path,
        {"sandbox": {"sandboxApproved": False, "excludedCommands": ["b"]}},
        name="settings.local.json",
    )
    merged, _ = merge(
        load_settings(tmp_path).sandbox_layers, trusted=True, project_sources=PROJECT_SOURCES
    )
    assert merged.sandbox_approved is False
    assert merged.excluded_commands == ("b", "a")


async def test_proctor_check_says_which_sandbox_a_command_gets(tmp_path: Path):
    checker = Checker(ToolPool(all_base_tools()), cwd=tmp_path, isolated=True)
    ls = (await checker.check(CheckRequest("Bash", {"command": "ls"}))).as_json()
    install = (await checker.check(CheckRequest("Bash", {"command": "npm install"}))).as_json()
    read = (await checker.check(CheckRequest("Read", {"file_path": str(tmp_path / "x")}))).as_json()
    if SUPPORT.available:
        assert ls["sandbox"] == "read-only"
        assert "read-only" in ls["sandbox_reason"]
    else:
        assert ls["sandbox"] == "none" and "no sandbox here" in ls["sandbox_reason"]
    assert install["behavior"] == "ask" and install["sandbox"] == "none"
    assert "sandbox" not in read


@needs_sandbox
async def test_the_audit_log_records_the_sandbox_of_each_decision_and_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    fenced = make_fenced(tmp_path, monkeypatch, answers=[Approve()])
    log = AuditLog(tmp_path / "audit.jsonl")
    chain = DecisionChain(audit=log, sandbox=fenced.sandbox)
    from engine_helpers import make_services

    from core.executor import StreamingToolExecutor, ToolCall

    services = make_services(permissions=chain, permission_port=fenced.port)
    executor = StreamingToolExecutor(services, fenced.context())
    executor.add_tool(ToolCall("toolu_ls", "Bash", {"command": "ls"}))
    executor.add_tool(ToolCall("toolu_touch", "Bash", {"command": "touch made"}))
    [u async for u in executor.get_remaining_results()]
    log.close()
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    ls, touch, answer = records
    assert ls["tool_use_id"] == "toolu_ls" and ls["behavior"] == "allow"
    assert ls["sandbox"] == "read-only" and ls["sandbox_why"] == "judged read-only by the analysis"
    assert touch["behavior"] == "ask" and touch["sandbox"] == "none"
    assert answer["kind"] == "answer" and answer["sandbox"] == "outside the sandbox"


def test_a_probe_that_cannot_even_make_a_ruleset_says_why(monkeypatch: pytest.MonkeyPatch):
    from core.sandbox import kernel, support

    def refuse(*args: object, **kwargs: object) -> None:
        raise kernel.KernelError(1, "creating the Landlock ruleset: Operation not permitted")

    monkeypatch.setattr(kernel, "landlock_abi", lambda: 7)
    monkeypatch.setattr(kernel.Ruleset, "__init__", refuse)
    found = support.probe()
    assert not found.available
    assert "Operation not permitted" in (found.problem or "")
