"""`--settings FILE` as users run it: one more settings file for this run, above the
project's own files, in the app, headless runs, `proctor check` and `proctor mcp list`."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.agent.headless import HeadlessOptions, run_headless

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PROCTOR_DATA_DIR": str(tmp_path / "data"),
        "PROCTOR_CONFIG_DIR": str(tmp_path / "config"),
    }


def proctor(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, indent=2))
    return path


def test_a_missing_settings_file_stops_the_app_and_headless_runs_before_they_start(
    tmp_path: Path, env: dict[str, str]
) -> None:
    for run in (["--demo"], ["--demo", "-p", "hello"]):
        result = proctor("--settings", "nowhere.json", *run, cwd=tmp_path, env=env)
        assert result.returncode == 2, result.stderr
        assert f"--settings {tmp_path / 'nowhere.json'}: there is no such file" in result.stderr
        assert "Traceback" not in result.stderr
    folder = proctor("--settings", str(tmp_path), "--demo", cwd=tmp_path, env=env)
    assert folder.returncode == 2 and "is a directory, not a file" in folder.stderr
    inline = proctor("--settings", '{"model": "x"}', "-p", "hi", cwd=tmp_path, env=env)
    assert inline.returncode == 2 and "inline JSON is not supported" in inline.stderr


def test_check_decides_with_the_settings_file_and_names_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    extra = write(tmp_path / "extra.json", {"permissions": {"deny": ["Bash(ls:*)"]}})
    words = proctor("check", "--settings", "extra.json", "Bash", "ls -la", cwd=tmp_path, env=env)
    assert words.returncode == 0, words.stderr
    assert words.stdout.startswith("deny: Bash(ls -la)")
    assert f"the deny rule Bash(ls:*) in {extra}" in words.stdout
    # Before the subcommand works too, as for the app.
    before = proctor("--settings", str(extra), "check", "Bash", "ls", cwd=tmp_path, env=env)
    assert before.stdout.startswith("deny: Bash(ls)")
    missing = proctor(
        "check", "--json", "--settings", "gone.json", "Bash", "ls", cwd=tmp_path, env=env
    )
    assert missing.returncode == 2
    assert "there is no such file" in json.loads(missing.stdout)["error"]


def test_check_refuses_settings_with_isolated_rather_than_ignore_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    write(tmp_path / "extra.json", {})
    result = proctor(
        "check", "--isolated", "--settings", "extra.json", "Bash", "ls", cwd=tmp_path, env=env
    )
    assert result.returncode == 2
    assert "--isolated reads no settings file" in result.stderr


def test_mcp_list_reads_the_settings_file(tmp_path: Path, env: dict[str, str]) -> None:
    write(tmp_path / "extra.json", {"mcpServers": {"bad name!": {"command": "x"}}})
    result = proctor("mcp", "list", "--settings", "extra.json", cwd=tmp_path, env=env)
    assert f"{tmp_path / 'extra.json'}:" in result.stderr and "bad name!" in result.stderr
    missing = proctor("mcp", "list", "--settings", "gone.json", cwd=tmp_path, env=env)
    assert missing.returncode == 2 and "there is no such file" in missing.stderr


async def test_a_headless_run_takes_the_files_mode_and_reports_its_problems_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    extra = write(tmp_path / "extra.json", {"permissions": {"defaultMode": "plan"}, "model": 3})
    out = io.StringIO()
    options = HeadlessOptions(
        prompt=None,
        cwd=tmp_path,
        output_format="stream-json",
        demo=True,
        scenario="quick",
        demo_speed=0.0,
        settings_file=extra,
    )
    assert await run_headless(options, out) == 0
    init = json.loads(out.getvalue().splitlines()[0])
    assert init["mode"] == "plan"
    assert f"{extra}:5:3: model: must be a model name" in capsys.readouterr().err
