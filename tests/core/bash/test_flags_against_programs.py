"""Flag tables checked against the programs themselves: a value flag that the program does
not give the next word to would hide that word from the analysis (`git diff -U --output=f`
writes f). Each git value flag is run by git in a scratch repository before a write option;
if the file appears, git did not swallow the word, and the table is wrong. Every other
program's value flags are run before an option no program has: if the program complains
about that option, the flag did not take it as its value, and the table is wrong."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from core.bash import analyze
from core.bash.commands import READ_ONLY
from core.bash.flags import Arg
from core.bash.git import SUBCOMMANDS


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(root)], check=True)
    (root / "f").write_text("a\n")
    subprocess.run([*git, "add", "f"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=root, check=True)
    (root / "f").write_text("a\nb\n")
    return root


VALUE_FLAGS = sorted(
    (sub, name)
    for sub, table in SUBCOMMANDS.items()
    for name, flag in table.flags.items()
    if flag.arg in (Arg.VALUE, Arg.PATH) and not flag.unsafe
)


def test_every_git_value_flag_really_takes_the_next_word(repository: Path):
    written: list[str] = []
    target = repository.parent / "written"
    for sub, name in VALUE_FLAGS:
        target.unlink(missing_ok=True)
        subprocess.run(
            ["git", sub, name, f"--output={target}"],
            cwd=repository,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=20,
            check=False,
        )
        if target.exists():
            written.append(f"git {sub} {name}")
    assert written == [], "these flags take their value only attached: mark them `?`"


NO_SUCH_OPTION = "--zzqq-no-such-option"
_COMPLAINT = re.compile(r"(unrecognized|unknown|invalid|illegal) option.{0,40}zzqq", re.I | re.S)
PROGRAM_VALUE_FLAGS = sorted(
    (name, flag)
    for name, table in READ_ONLY.items()
    for flag, spec in table.flags.items()
    if spec.arg in (Arg.VALUE, Arg.PATH) and not spec.unsafe and shutil.which(name)
)


def test_the_detector_sees_an_option_that_was_not_swallowed(tmp_path: Path):
    assert _complains("ls", "-l", tmp_path) and _complains("sort", "-r", tmp_path)
    assert not _complains("sort", "-k", tmp_path)


def _complains(program: str, flag: str, cwd: Path) -> bool:
    try:
        finished = subprocess.run(
            [program, flag, NO_SUCH_OPTION],
            cwd=cwd,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=20,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False  # waiting on something: it took the word, or it never got to it
    return _COMPLAINT.search(finished.stderr) is not None


def test_every_value_flag_of_the_other_programs_takes_the_next_word(tmp_path: Path):
    assert len(PROGRAM_VALUE_FLAGS) > 50  # the coreutils and grep at least are here
    wrong = [
        f"{name} {flag}" for name, flag in PROGRAM_VALUE_FLAGS if _complains(name, flag, tmp_path)
    ]
    assert wrong == [], "these flags do not take the next word: mark them `?` or plain"


@pytest.mark.parametrize(
    "command",
    ["git diff -U --output=/tmp/x", "git log --format --output=/tmp/x",
     "git show --unified --output=/tmp/x", "git log --max-parents --output=/tmp/x",
     "git reflog expire --all", "git reflog delete HEAD@{0}", "git remote show origin",
     "man ./page.1", "man /etc/passwd"],
)  # fmt: skip
def test_writes_and_code_behind_flags_are_not_read_only(command: str):
    assert not analyze(command).read_only, command


@pytest.mark.parametrize(
    "command",
    ["git log -U3 -1", "git log --format=%h -3", "git diff --unified=5", "git reflog -5",
     "git reflog show main", "git remote show -n origin", "git remote -v", "man 5 crontab"],
)  # fmt: skip
def test_the_same_flags_used_as_meant_stay_read_only(command: str):
    assert analyze(command).read_only, analyze(command).reason
