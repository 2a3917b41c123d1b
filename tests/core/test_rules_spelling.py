"""Rules mean what they say, however the command is spelled: a deny for `git log` covers
`/usr/bin/git log` and `git --no-pager -C . log`; an allow covers a command across its
output redirection and through the assignments the rule itself names; the reason given
is about the part of a compound command that is really in question."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.access.context import PermissionMode, ToolPermissionContext
from core.access.decision import Allow, Ask, Deny, PermissionDecision
from core.access.rules import parse_rule
from core.hooks import NO_PRE_OUTCOME
from core.permissions.decide import evaluate, prepare
from core.tools.bash import Bash

TOOL = Bash()


def decide(
    command: str, *rules: str, mode: PermissionMode = "default", cwd: Path = Path("/work/p")
) -> PermissionDecision:
    parsed = tuple(parse_rule(r.split(" ", 1)[1], r.split(" ", 1)[0]) for r in rules)  # type: ignore[arg-type]
    permissions = ToolPermissionContext(mode=mode, rules=parsed)
    return evaluate(
        prepare(TOOL, TOOL.parse_input({"command": command}), cwd, permissions), NO_PRE_OUTCOME
    )


@pytest.mark.parametrize(
    "command",
    [
        "git push origin main",
        "/usr/bin/git push origin main",
        "git --no-pager push origin main",
        "git -C . push origin main",
        "git -c core.sshCommand=x push",
        "git --git-dir=.git push",
        "git --unknown-option value push",
        "command git push",
        "env GIT_TRACE=1 git push",
        "timeout 60 /usr/bin/git -C sub push",
    ],
)
def test_a_deny_rule_names_the_program_however_it_is_spelled(command: str):
    decision = decide(command, "deny Bash(git push:*)", mode="bypassPermissions")
    assert isinstance(decision, Deny), command


def test_an_allow_rule_takes_only_safe_spellings():
    rule = "allow Bash(git log:*)"
    for command in ("git --no-pager log -1", "/usr/bin/git log", "git -C sub log"):
        assert isinstance(decide(command, rule, mode="plan"), Allow), command
    for command in ("git -c core.pager=evil log", "/tmp/git log", "./git log"):
        assert not isinstance(decide(command, rule), Allow), command


def test_an_allow_rule_matches_across_an_output_redirection(tmp_path: Path):
    decision = decide(
        "python3 gen.py > out.txt", "allow Bash(python3:*)", "allow Edit(./**)", cwd=tmp_path
    )
    assert isinstance(decision, Allow)
    # The redirect target is still a write that must be allowed.
    assert isinstance(
        decide("python3 gen.py > out.txt", "allow Bash(python3:*)", cwd=tmp_path), Ask
    )
    assert isinstance(
        decide("make > build.log", "allow Bash(make)", "allow Edit(./**)", cwd=tmp_path), Allow
    )


def test_a_rule_may_start_with_the_assignments_it_allows():
    rule = "allow Bash(PAGER=cat gh:*)"
    assert isinstance(decide("PAGER=cat gh pr view 1", rule), Allow)
    assert not isinstance(decide("PAGER=less gh pr view 1", rule), Allow)
    assert not isinstance(decide("gh pr view 1", rule), Allow)
    assert not isinstance(decide("PAGER=$EVIL gh pr view 1", rule), Allow)


def test_the_reason_names_the_part_that_is_not_allowed():
    decision = decide("npm test && rm -rf build", "allow Bash(npm test:*)")
    assert isinstance(decision, Ask)
    assert "rm -rf build" in decision.message and "npm test" not in decision.message
    assert decision.suggestions == ("Bash(rm:*)",)


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("env -C /etc cat shadow", "deny Read(//etc/shadow)"),
        ("env --chdir=/etc cat ./shadow", "deny Read(//etc/shadow)"),
        ("sudo -D /etc cat shadow", "deny Read(//etc/shadow)"),
        ("/usr/bin/time -o ~/.bashrc ls", "deny Edit(~/.bashrc)"),
        ("time --output=/etc/motd ls", "deny Edit(//etc/motd)"),
    ],
)
def test_path_rules_see_what_a_wrapper_changes(command: str, rule: str):
    """A wrapper's own options count: a directory changes what relative paths mean, and an
    output file is a write."""
    assert isinstance(decide(command, rule, mode="bypassPermissions"), Deny), command


@pytest.mark.parametrize(
    ("command", "suggested"),
    [
        ("python3 -m unittest", "Bash(python3 -m unittest:*)"),
        ("python3 gen.py --out x", "Bash(python3 gen.py:*)"),
        ("npm run build", "Bash(npm run build:*)"),
        ("uv run pytest -x", "Bash(uv run pytest:*)"),
        ("make", "Bash(make)"),
        ("make test", "Bash(make test:*)"),
        ("npx eslint .", "Bash(npx eslint:*)"),
        ("timeout 60 npm test", "Bash(timeout 60 npm test)"),
        ("bash -c 'ls x'", "Bash(bash -c 'ls x')"),
        ("cat /etc/hostname", "Bash(cat /etc/hostname)"),  # a read outside: exactly it
    ],
)
def test_the_suggested_rule_is_the_narrowest_a_person_would_reuse(command: str, suggested: str):
    decision = decide(command)
    assert isinstance(decision, Ask)
    assert decision.suggestions[:1] == (suggested,)
    again = decide(command, f"allow {suggested}")
    assert isinstance(again, Allow), f"{suggested} does not allow {command}"


def test_no_bare_interpreter_is_ever_suggested():
    for command in ("python3 -c 'x'", "node -e 1", "env X=1 python3 y.py", "sh -c 'rm x'"):
        decision = decide(command)
        assert isinstance(decision, Ask)
        bare = {"Bash(python3:*)", "Bash(node:*)", "Bash(env:*)", "Bash(sh:*)", "Bash"}
        assert not bare & set(decision.suggestions), decision.suggestions


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git {push,origin,master}", "deny Bash(git push:*)"),
        ("git pus? origin master", "deny Bash(git push:*)"),
        ("g=git; $g push", "deny Bash(git push:*)"),
        ("cat {.env,a.txt}", "deny Read(.env)"),
        ("f=.env; cat $f", "deny Read(.env)"),
    ],
)
def test_words_known_only_when_bash_runs_may_be_what_a_rule_names(command: str, rule: str):
    """Brace expansion, variables and globs can spell a denied command or path: not
    certainly allowed, so even bypass mode asks."""
    decision = decide(command, rule, mode="bypassPermissions")
    assert isinstance(decision, Ask), command


def test_a_glob_that_cannot_spell_the_rule_is_not_held_up():
    assert isinstance(decide("ls *.md", "deny Bash(git push:*)", mode="bypassPermissions"), Allow)


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git pus?", "deny Bash(git push:*)"),
        ("git pu*", "deny Bash(git push *)"),
        ("/usr/bin/gi? push", "deny Bash(git push:*)"),  # was allowed: found by mutation
        ("/usr/*/git push", "deny Bash(git push:*)"),
    ],
)
def test_a_glob_that_can_spell_the_rule_is_not_run_even_in_bypass(command: str, rule: str):
    assert not isinstance(decide(command, rule, mode="bypassPermissions"), Allow), command


def test_a_glob_command_shorter_than_the_rule_cannot_be_it():
    # `l?` is one word; `git push` needs two, so no expansion of it is the denied command.
    assert isinstance(decide("l?", "deny Bash(git push:*)", mode="bypassPermissions"), Allow)


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("rm -- -rf", "deny Bash(rm -rf:*)"),  # after `--`, `-rf` is a file's name
        ("rm -f xr", "deny Bash(rm -rf:*)"),  # `xr` is an operand, not the letter r
        ("rm -d x", "deny Bash(rm -v:*)"),  # two flags the table does not know stay apart
    ],
)
def test_flags_a_deny_rule_names_are_read_as_flags_only(command: str, rule: str):
    assert isinstance(decide(command, rule, mode="bypassPermissions"), Allow), command


@pytest.mark.parametrize(
    "command",
    ["git push --force-with-lease=main origin", "rm -fr x", "rm x --recursive --force"],
)
def test_a_deny_rule_names_flags_however_they_are_written(command: str):
    """Spelt another way the command may be the denied one: it is not run unasked, even in
    bypass mode, and the question names the rule."""
    rule = "Bash(git push --force-with-lease:*)" if "push" in command else "Bash(rm -rf:*)"
    decision = decide(command, f"deny {rule}", mode="bypassPermissions")
    assert isinstance(decision, Ask) and rule in decision.message, command


@pytest.mark.parametrize(
    ("command", "rule", "allowed"),
    [
        ("/usr/bin/git commit -m x", "allow Bash(git commit:*)", True),  # by program name
        ("git --no-pager commit -m x", "allow Bash(git commit:*)", True),  # a safe global
        ("git -c core.pager=x commit -m x", "allow Bash(git commit:*)", False),
        ("PAGER=cat gh pr list", "allow Bash(PAGER=cat gh:*)", True),
        ("GH_X=1 gh pr", "allow Bash(GH_X=1 gh:*)", True),
        ("PAGER=$X gh pr list", "allow Bash(PAGER=cat gh:*)", False),  # not known till run
        ("echo 'a", "allow Bash(echo:*)", False),  # not read as bash reads it
    ],
)
def test_an_allow_rule_covers_the_spellings_it_can_be_sure_of(
    command: str, rule: str, allowed: bool
):
    assert isinstance(decide(command, rule), Allow if allowed else Ask), command


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git pull --force", "deny Bash(git push --force:*)"),  # another subcommand
        ("ls -rf", "deny Bash(rm -rf:*)"),  # another program, the same letters
        ("git push --force upstream", "deny Bash(git push --force origin:*)"),  # as written
        ("npm publish -f x", "deny Bash(npm publish --force:*)"),  # no table says -f is it
        ("git push --f origin", "deny Bash(git push --force:*)"),  # too short to abbreviate
        ("git push --forc origin", "deny Bash(git push --force --tags:*)"),  # --tags missing
        ("rm", "deny Bash(rm -rf:*)"),
    ],
)
def test_a_flagged_deny_rule_does_not_reach_commands_it_does_not_name(command: str, rule: str):
    assert isinstance(decide(command, rule, mode="bypassPermissions"), Allow), command
