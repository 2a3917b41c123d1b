"""A deny rule holds against programs that run other programs: `bash -c`, `eval`, `env -S`,
`xargs`, `find -exec`, git aliases, and wrappers proctor has never heard of. Where the
command run is spelled out, the rule denies; where part of it is known only when it runs,
the call asks. In bypass mode, where nothing else would stop it."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.access.context import PermissionMode, ToolPermissionContext
from core.access.decision import Allow, Ask, Deny, PermissionDecision
from core.access.rules import parse_rule
from core.bash.runners import Inner, commands_run
from core.hooks import NO_PRE_OUTCOME
from core.permissions.decide import evaluate, prepare
from core.tools.bash import Bash

TOOL = Bash()
DENY_PUSH = "deny Bash(git push:*)"


def decide(
    command: str, *rules: str, mode: PermissionMode = "bypassPermissions"
) -> PermissionDecision:
    parsed = tuple(parse_rule(r.split(" ", 1)[1], r.split(" ", 1)[0]) for r in rules)  # type: ignore[arg-type]
    permissions = ToolPermissionContext(mode=mode, rules=parsed)
    call = prepare(TOOL, TOOL.parse_input({"command": command}), Path("/work/p"), permissions)
    return evaluate(call, NO_PRE_OUTCOME)


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'git push origin main'",
        "sh -ec 'cd sub && git push'",
        "bash -o pipefail -c 'git push'",
        "eval git push",
        "eval 'git status; git push'",
        "trap 'git push' EXIT",
        "env -S 'git push'",
        "env --split-string='git push --force'",
        "sudo -u me bash -c 'timeout 5 git push'",
        "find . -maxdepth 0 -exec git push \\;",
        "git -c alias.p=push p origin",
        "git -c 'alias.p=!git push' p",
        "bash -c \"bash -c 'git push'\"",
        "xargs --show-limits git push",
    ],
)
def test_a_command_spelled_out_inside_another_is_denied(command: str):
    assert isinstance(decide(command, DENY_PUSH), Deny), command


@pytest.mark.parametrize(
    "command",
    [
        "echo push | xargs git",  # xargs adds words read from its input
        "xargs -a names git",
        "find . -name push -exec git {} \\;",  # a file name becomes the subcommand
        "git p",  # may be an alias from a configuration file
        'eval "$CMD"',
        "echo git push | bash",  # the shell reads its script from input
        "bash -s < script",
        'sh -c "$X"',
        "chronic git push",  # a wrapper proctor does not know
        "flock /tmp/lock git push",
        "doas git push",
        "script -qc 'git push' /dev/null",
        "ssh host git push",
        "python3 -c 'import os; os.system(\"git push\")'",
        'python3 -c \'subprocess.run(["git", "push"])\'',
        "node -e 'execSync(`git push`)'",
        "git -c core.pager='git push' log",
        "env -S '$CMD'",
    ],
)
def test_a_command_that_may_run_the_denied_one_asks(command: str):
    decision = decide(command, DENY_PUSH)
    assert isinstance(decision, Ask), (command, decision)
    assert "Bash(git push:*)" in decision.message


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'git status'",
        "grep -rn 'git push' docs",  # read-only: its words are data
        "git log --grep='push'",
        "echo log | xargs git log",  # xargs runs git log, never git push
        "find . -name '*.py' -exec wc -l {} +",
        "python3 tools/gen.py",
        "git -c alias.st=status st",
    ],
)
def test_commands_that_cannot_run_the_denied_one_still_run_in_bypass(command: str):
    assert isinstance(decide(command, DENY_PUSH), Allow), command


def test_an_ask_rule_sees_inside_runners_too():
    decision = decide("bash -c 'npm publish'", "ask Bash(npm publish:*)", mode="acceptEdits")
    assert isinstance(decision, Ask)
    assert "npm publish" in decision.message


def test_xargs_words_are_open_ended_and_find_names_unknown():
    assert Inner(("git",), open_ended=True) in commands_run(("xargs", "git")).commands
    found = commands_run(("find", ".", "-exec", "rm", "{}", ";")).commands
    assert Inner(("rm", None)) in found


_RUNNERS = st.sampled_from(
    [
        "bash -c {q}",
        "sh -c {q}",
        "eval {q}",
        "env -S {q}",
        "sudo {w}",
        "timeout 9 nice -n 3 {w}",
        "find . -exec {w} \\;",
        "xargs -0 {w} < /dev/null",
        "chronic {w}",
        "unbuffer {w}",
        "bash -c {qq}",
    ]
)
_PROGRAMS = st.sampled_from(["rm -rf build", "git push", "npm publish", "curl example.com"])
_EXTRA = st.lists(st.sampled_from(["-v", "x", "--force", "origin", "main"]), max_size=3)


@given(_RUNNERS, _RUNNERS, _PROGRAMS, _EXTRA)
def test_no_nesting_of_runners_lets_a_denied_command_through(
    outer: str, inner: str, program: str, extra: list[str]
):
    command = " ".join([program, *extra])
    for template in (inner, outer):
        command = template.format(
            q=shlex.quote(command), qq=shlex.quote(f"true; {command}"), w=command
        )
    decision = decide(command, f"deny Bash({program}:*)")
    assert not isinstance(decision, Allow), command


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("bash -c 'cat .e\"\"nv'", Deny),  # the script is judged as a command line
        ("env -S 'cat .env'", Deny),
        ("find . -exec cat .env \\;", Deny),
        ("python3 -c 'open(\".env\")'", Ask),  # a path handed to a program that may open it
        ("python3 -c 'print(open(\".env\").read())'", Ask),
        ("cat notes | bash", Ask),  # a script read from input may read anything
        ("git config --list --blob HEAD:.env", Deny),  # read out of git's objects
        ("tar cf - .", Ask),  # an archive reads the tree whole
        ("git archive HEAD", Ask),
        ("tar tf backup.tar", Allow),  # listing an archive reads only the archive
        ("bash -c 'cat README.md'", Allow),
        ("python3 tools/gen.py", Allow),
    ],
)
def test_a_read_deny_rule_reaches_paths_that_runners_and_archivers_read(
    command: str, expected: type
):
    decision = decide(command, "deny Read(.env)")
    assert isinstance(decision, expected), (command, decision)


# Found by attacking the first version: words split by quotes (`pu""sh`) defeat any search
# of the text, so what runs code the analysis cannot read asks, whatever its words say.
@pytest.mark.parametrize(
    "command",
    [
        'let "a[\\$(git pu\\"\\"sh)]=1"',
        "[[ -v 'a[$(git pu\"\"sh)]' ]]",
        "printf -v 'a[$(git pu\"\"sh)]' x",
        'mapfile -C "git pu\\"\\"sh" -c 1 < notes',
        "PS4='$(git pu\"\"sh)'; set -x; :",
        'shopt -s expand_aliases; alias p="git pu\\"\\"sh"\np',
        'script -qc "git pu\\"\\"sh" /dev/null',
        'flock f -c "git pu\\"\\"sh"',
        'python3 -c \'import os; os.system("git pu"+"sh")\'',
        'python3 -Bc \'import os; os.system("git pu"+"sh")\'',
        'awk \'BEGIN{system("git pu" "sh")}\'',
        "sed -n '1e git pu\"\"sh' notes",
        "GIT_EXTERNAL_DIFF=./push.sh git diff",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.svn GIT_CONFIG_VALUE_0=push git svn",
        "git -c core.fsmonitor='./x; false' status",
        "git svn",  # not built into git: an alias when git-svn is not installed
        "bash /dev/stdin <<< 'git pu\"\"sh'",
        "printf x | bash /dev/fd/0",
        "env --frobnicate git push",
    ],
)
def test_code_the_analysis_cannot_read_asks_when_a_rule_could_be_in_it(command: str):
    assert isinstance(decide(command, DENY_PUSH), Ask), command


@pytest.mark.parametrize(
    "command",
    [
        "find . -exec bash -c 'git pu\"\"sh' {} +",
        "find . -exec sh -c 'git pu\"\"sh' _ {} \\;",
        "bash --rcfile x -c 'git pu\"\"sh'",
        "/usr/bin//bash -c 'git pu\"\"sh'",
        "busybox sh -c 'git push'",
        "env -u X -S 'git pu\"\"sh'",
        "env --split-s='git pu\"\"sh'",
        "env -uX -S'git push'",
        "trap -- 'git pu\"\"sh' EXIT",
    ],
)
def test_runners_found_by_attack_are_looked_into(command: str):
    assert isinstance(decide(command, DENY_PUSH), Deny), command


# Found by a second attack.
@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("TAR_OPTIONS='--checkpoint-action=exec=rm\\ v' tar cf /dev/null a", "deny Bash(rm:*)"),
        ("env TAR_OPTIONS=x tar cf /dev/null a", "deny Bash(rm:*)"),
        ("[ x > .git/config ]", "deny Edit(.git/**)"),
        ("printf '.env\\0' | sort --files0-from=-", "deny Read(.env)"),
        ("find . -name '*.txt' | xargs cat", "deny Read(.env)"),
        ("grep --directories recurse SECRET .", "deny Read(.env)"),
        ("diff -rN . /tmp/empty", "deny Read(.env)"),
        ("git diff --no-index . /tmp/empty", "deny Read(.env)"),
    ],
)
def test_second_round_reads_and_runs_ask_or_deny(command: str, rule: str):
    assert not isinstance(decide(command, rule), Allow), command


def test_sed_reads_an_operand_that_looks_like_an_assignment():
    assert isinstance(decide("sed -n p 'a=/../.env'", "deny Read(.env)"), Deny)


@pytest.mark.parametrize("command", ["sort --files0-from=-", "file -f -", "echo /etc/*"])
def test_reads_of_names_nobody_can_see_ask_in_default_mode(command: str):
    assert isinstance(decide(command, mode="default"), Ask), command
