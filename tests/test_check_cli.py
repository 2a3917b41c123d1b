"""`proctor check` as users run it: the real command line on the real built-in tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def check(*args: str, stdin: str | None = None, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", "check", "--isolated", "--cwd", str(cwd), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


def test_a_single_call_in_words_and_in_json(tmp_path: Path):
    words = check("--deny", "Bash(git push:*)", "Bash", "git push origin main", cwd=tmp_path)
    assert words.returncode == 0, words.stderr
    assert words.stdout.startswith("deny: Bash(git push origin main)")
    assert "the deny rule Bash(git push:*) (cli)" in words.stdout
    answer = json.loads(check("--json", "Bash", "ls -la", cwd=tmp_path).stdout)
    assert answer["behavior"] == "allow" and answer["read_only"] and answer["concurrency_safe"]


def test_the_rule_dont_ask_again_would_keep_is_shown(tmp_path: Path):
    answer = json.loads(check("--json", "Bash", "python3 -m unittest", cwd=tmp_path).stdout)
    assert answer["behavior"] == "ask"
    assert answer["suggestions"] == ["Bash(python3 -m unittest:*)"]
    words = check("Bash", "python3 -m unittest", cwd=tmp_path).stdout
    assert "don't ask again would keep: Bash(python3 -m unittest:*)" in words


def test_modes_change_the_answer(tmp_path: Path):
    edit = json.dumps({"file_path": str(tmp_path / "a.txt"), "content": "x"})
    assert json.loads(check("--json", "Write", edit, cwd=tmp_path).stdout)["behavior"] == "ask"
    accepted = check("--json", "--mode", "acceptEdits", "Write", edit, cwd=tmp_path)
    assert json.loads(accepted.stdout)["behavior"] == "allow"
    planned = check("--json", "--mode", "plan", "Write", edit, cwd=tmp_path)
    assert json.loads(planned.stdout)["behavior"] == "deny"


def test_batch_keeps_order_and_answers_bad_lines_with_errors(tmp_path: Path):
    lines = (
        "\n".join(
            [
                json.dumps({"tool": "Bash", "input": {"command": "git status"}}),
                "{broken",
                json.dumps(
                    {"tool": "Bash", "input": {"command": "rm -rf /"}, "mode": "bypassPermissions"}
                ),
                json.dumps({"tool": "Nope", "input": {}}),
            ]
        )
        + "\n"
    )
    result = check("--batch", stdin=lines, cwd=tmp_path)
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [a.get("behavior", "error") for a in answers] == ["allow", "error", "ask", "error"]
    assert "unknown tool 'Nope'" in answers[3]["error"]


def test_bad_input_is_an_error_with_exit_status_2(tmp_path: Path):
    result = check("Read", '{"file_path": 3}', cwd=tmp_path)
    assert result.returncode == 2 and "file_path" in result.stderr
    missing = check("Bash", cwd=tmp_path)
    assert missing.returncode == 2 and "needs a TOOL and its INPUT" in missing.stderr


def test_check_reports_the_settings_problems_it_decided_with(tmp_path: Path):
    settings = tmp_path / ".proctor" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"permissions": {"deny": ["WebSearch"]}}')
    env = {**os.environ, "PROCTOR_CONFIG_DIR": str(tmp_path / "config")}

    def run(*args: str, stdin: str | None = None) -> dict[str, object]:
        command = [sys.executable, "-m", "tui", "check", "--cwd", str(tmp_path), *args]
        done = subprocess.run(
            command, input=stdin, capture_output=True, text=True, cwd=ROOT, env=env, check=True
        )
        return json.loads(done.stdout.splitlines()[0])

    [problem] = run("--json", "Bash", "ls")["settings_problems"]  # type: ignore[misc]
    assert "no tool named 'WebSearch'" in problem
    batch = run("--batch", stdin='{"tool": "Bash", "input": {"command": "ls"}}\n')
    assert "no tool named 'WebSearch'" in str(batch["settings_problems"])


def test_a_reader_that_stops_early_ends_the_batch_quietly(tmp_path: Path):
    """`proctor check --batch ... | head -1`: the closed pipe is not an error."""
    request = json.dumps({"tool": "Bash", "input": {"command": "ls"}}) + "\n"
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "check", "--batch", "--isolated", "--cwd", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(request.encode())
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["behavior"] == "allow"
    process.stdout.close()  # the reader is gone; more answers have nowhere to go
    _, stderr = process.communicate(request.encode() * 5000)
    assert process.returncode == 0
    assert b"Traceback" not in stderr


def test_a_settings_file_that_cannot_be_read_makes_every_call_ask(tmp_path: Path):
    """Its deny rules cannot be read, so what they might have refused asks (fail closed)."""
    env = {**os.environ, "PROCTOR_CONFIG_DIR": str(tmp_path / "config")}
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Bash"],}}')

    def decide(*args: str) -> dict[str, object]:
        command = [sys.executable, "-m", "tui", "check", "--json", "--cwd", str(tmp_path), *args]
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    for args in (("Bash", "ls -la"), ("--mode", "bypassPermissions", "Bash", "rm -rf build")):
        answer = decide(*args)
        assert answer["behavior"] == "ask", args
    read = json.dumps({"file_path": str(tmp_path / "a.txt")})
    assert decide("Read", read)["behavior"] == "ask"
