"""Starting permissions from settings: an untrusted project restricts but never widens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.permissions.setup import permission_context_from
from core.settings.read import load_settings


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    root = tmp_path / "app"
    (root / ".proctor").mkdir(parents=True)
    (root / ".proctor" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {
                    "allow": ["Bash"],
                    "deny": ["Read(.env)"],
                    "defaultMode": "acceptEdits",
                    "additionalDirectories": ["/"],
                }
            }
        )
    )
    return root


def test_a_trusted_project_gets_its_settings(project: Path):
    context, notes = permission_context_from(load_settings(project), trusted=True)
    assert context.mode == "acceptEdits"
    assert {str(r) for r in context.rules} == {"Bash", "Read(.env)"}
    assert context.additional_working_directories == (Path("/"),)
    assert notes == ()


def test_an_untrusted_project_keeps_its_denials_and_loses_what_widens(project: Path):
    context, notes = permission_context_from(load_settings(project), trusted=False)
    assert context.mode == "default"
    assert [str(r) for r in context.rules] == ["Read(.env)"]
    assert context.additional_working_directories == ()
    assert len(notes) == 3 and all("until you trust the project" in n for n in notes)
    assert notes[0].startswith("1 allow rule from this project's settings")


def test_the_note_counts_the_allow_rules_set_aside(project: Path):
    (project / ".proctor" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(ls:*)", "Read", "Edit(src/**)"]}})
    )
    _, notes = permission_context_from(load_settings(project), trusted=False)
    assert notes == (
        "3 allow rules from this project's settings are set aside until you trust the project",
    )


def test_bypass_needs_the_session_to_start_with_it(project: Path):
    (project / ".proctor" / "settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "bypassPermissions"}})
    )
    context, notes = permission_context_from(load_settings(project))
    assert context.mode == "default" and not context.bypass_available
    assert "--allow-bypass" in notes[0]
    context, _ = permission_context_from(load_settings(project), allow_bypass=True)
    assert context.mode == "bypassPermissions" and context.bypass_available
    context, _ = permission_context_from(load_settings(project), mode="plan", allow_bypass=True)
    assert context.mode == "plan" and context.bypass_available


def test_cli_rules_are_kept_untrusted(project: Path):
    settings = load_settings(project, allow=["Bash(ls:*)"])
    context, _ = permission_context_from(settings, trusted=False)
    assert "Bash(ls:*)" in {str(r) for r in context.rules}
