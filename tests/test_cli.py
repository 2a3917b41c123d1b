"""The command line: `proctor --version` answers fast, without textual or anthropic."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from core import __version__

ROOT = Path(__file__).resolve().parents[1]


def test_version_prints_the_version_and_loads_neither_textual_nor_anthropic():
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tui", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"proctor {__version__}"
    imported = set(re.findall(r"\|\s+(\S+)$", result.stderr, re.MULTILINE))
    assert "core" in imported  # the trace is real
    heavy = {name for name in imported if name.split(".")[0] in ("textual", "anthropic", "rich")}
    assert heavy == set()


def test_unknown_options_are_refused_with_usage():
    result = subprocess.run(
        [sys.executable, "-m", "tui", "--no-such-flag"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "usage: proctor" in result.stderr and "--no-such-flag" in result.stderr


def test_sessions_lists_this_projects_sessions(tmp_path: Path):
    env = {**os.environ, "PROCTOR_DATA_DIR": str(tmp_path / "data")}
    run = [sys.executable, "-m", "tui", "sessions", "--cwd", str(tmp_path)]
    empty = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert empty.returncode == 0 and "No sessions" in empty.stdout
    made = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; "
            "from core.agent.sessions import create_session, set_title; "
            "s = create_session(Path(sys.argv[1])); set_title(s, 'fix the parser'); print(s.id)",
            str(tmp_path),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    listed = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert listed.stdout.startswith(made) and "fix the parser" in listed.stdout
    as_json = subprocess.run(
        [*run, "--json"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert json.loads(as_json.stdout)["id"] == made


def test_without_a_key_proctor_says_how_to_get_one_or_try_the_demo(tmp_path: Path):
    credentials = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    env = {k: v for k, v in os.environ.items() if k not in credentials}
    result = subprocess.run(
        [sys.executable, "-m", "tui"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "ANTHROPIC_API_KEY" in result.stderr and "proctor --demo" in result.stderr
    assert "ANTHROPIC_AUTH_TOKEN" in result.stderr


def test_continue_and_resume_are_options_of_a_run(tmp_path: Path):
    env = {**os.environ, "PROCTOR_DATA_DIR": str(tmp_path / "data")}
    result = subprocess.run(
        [sys.executable, "-m", "tui", "--resume", "nope", "--demo", "--scenario", "quick"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2 and "no sessions for" in result.stderr


def test_serve_runs_the_same_command_for_each_browser_without_the_serving_flags():
    from tui.cli import serve_command

    command = serve_command(
        ["--serve", "--demo", "--port", "9000", "--host=0.0.0.0", "--theme", "x"]
    )
    assert command.endswith("-m tui --demo --theme x")
    assert "--serve" not in command and "9000" not in command and "0.0.0.0" not in command


def test_p_without_a_prompt_plays_the_demo_scenario_headless(tmp_path: Path):
    env = {**os.environ, "PROCTOR_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "tui", "--demo", "--scenario", "quick", "-p"],
        cwd=tmp_path,
        env={**env, "PROCTOR_CONFIG_DIR": str(tmp_path / "config")},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "textstats" in result.stdout


def test_serve_serves_the_app_page_to_a_browser(tmp_path: Path):
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PROCTOR_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-m", "tui", "--serve", "--demo", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        page = ""
        for _ in range(300):  # the server takes a moment to listen
            try:
                with urllib.request.urlopen(f"http://localhost:{port}/", timeout=5) as response:
                    page = response.read().decode()
                break
            except OSError:
                if server.poll() is not None:
                    break
                time.sleep(0.1)
        assert "textual.js" in page, "the browser page that runs the app"
    finally:
        server.terminate()
        server.wait(timeout=10)
