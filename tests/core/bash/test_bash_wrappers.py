"""Wrappers, safe assignments and touched paths, as the decision chain uses them."""

from __future__ import annotations

import pytest

from core.bash import SAFE_ENV_VARS, analyze, strip_safe_assignments, touched_paths, unwrap


@pytest.mark.parametrize(
    ("words", "inner"),
    [
        ("sudo env A=1 timeout 5 nice rm x", "rm x"),
        ("timeout -s KILL 10 rm x", "rm x"),
        ("timeout --kill-after=5 10s rm x", "rm x"),
        ("nice -n 5 rm x", "rm x"),
        ("nice -5 rm x", "rm x"),
        ("env -i A=1 rm x", "rm x"),
        ("env -u HOME rm x", "rm x"),
        ("sudo -u root rm x", "rm x"),
        ("sudo -- rm x", "rm x"),
        ("xargs -0 -n1 rm x", "rm x"),
        ("xargs -I{} rm {}", "rm {}"),
        ("stdbuf -oL rm x", "rm x"),
        ("ionice -c3 rm x", "rm x"),
        ("ionice -c 2 -n 7 rm x", "rm x"),
        ("nohup rm x", "rm x"),
        ("time -p rm x", "rm x"),
        ("command rm x", "rm x"),
        ("builtin cd x", "cd x"),
        ("setsid -f rm x", "rm x"),
        ("watch -n 1 rm x", "rm x"),
        ("watch -x rm x", "rm x"),
        ("A=1 B=2 rm x", "rm x"),
        ("/usr/bin/env rm x", "rm x"),
        ("npm run test", "npm run test"),
    ],
)
def test_unwrap_strips_wrappers_and_their_options(words, inner):
    assert unwrap(tuple(words.split())) == tuple(inner.split())


@pytest.mark.parametrize(
    "words",
    [
        "timeout --bogus 5 rm x",  # unknown option: stop at the wrapper
        "command -v rm",  # a lookup, not a run
        "env -S 'rm x'",
        "sudo",
        "watch 'rm x; ls'",
    ],
)
def test_unwrap_stops_at_a_wrapper_it_does_not_understand(words):
    argv = tuple(words.split())
    assert unwrap(argv) == argv


def test_unwrap_of_a_wrapper_behind_an_assignment_keeps_the_wrapper_when_unknown():
    assert unwrap(("A=1", "timeout", "--bogus", "rm")) == ("timeout", "--bogus", "rm")


def test_safe_env_vars_include_locale_and_colour_but_nothing_that_runs_code():
    assert {"LANG", "LC_ALL", "TZ", "NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS"} <= SAFE_ENV_VARS
    dangerous = {"PATH", "LD_PRELOAD", "BASH_ENV", "ENV", "PYTHONPATH", "NODE_OPTIONS", "PAGER"}
    dangerous |= {"GIT_PAGER", "GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "IFS", "HOME"}
    assert not dangerous & SAFE_ENV_VARS
    assert not any(name.startswith("GIT_") for name in SAFE_ENV_VARS)


@pytest.mark.parametrize(
    ("command", "stripped"),
    [
        ("npm test", "npm test"),
        ("LANG=C npm test", "npm test"),
        ("LC_ALL=C TZ=UTC  npm run test:unit", "npm run test:unit"),
        ("NODE_OPTIONS=--require=x npm test", None),
        ("LANG=C PATH=/tmp npm test", None),
        ("LANG=$(id) npm test", None),
    ],
)
def test_strip_safe_assignments(command, stripped):
    cmd = analyze(command).commands[0]
    assert strip_safe_assignments(cmd) == stripped


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("cat a b", ("a", "b")),
        ("head -n 5 file", ("file",)),
        ("grep -rn pattern src tests", ("src", "tests")),
        ("grep -e pattern -f pats.txt src", ("pats.txt", "src")),
        ("rg -g '*.py' TODO ../other", ("../other",)),
        ("find /etc . -name '*.conf' -newer ref", ("/etc", ".", "ref")),
        ("sed -n 1,5p /etc/passwd", ("/etc/passwd",)),
        ("awk -v x=1 '{print}' y=2 data.txt", ("data.txt",)),
        ("git -C ../repo log -- a.py", ("../repo", "a.py")),
        ("git diff --no-index /etc/passwd b", ("/etc/passwd", "b")),
        ("cp -t dest a b", ("dest", "a", "b")),
        ("mv --target-directory=d a", ("d", "a")),
        ("rm -rf build dist", ("build", "dist")),
        ("mkdir -p -m 755 out", ("out",)),
        ("touch -r ref new", ("ref", "new")),
        ("cat < /etc/shadow", ("/etc/shadow",)),
        ("ls > listing.txt 2>&1", ("listing.txt",)),
        ("timeout 5 cat /etc/hosts", ("/etc/hosts",)),
        ("echo hello /etc", ()),
        ("sort -o /tmp/out in", ("/tmp/out", "in")),
        ("cd /etc", ("/etc",)),
    ],
)
def test_touched_paths(command, paths):
    (cmd,) = analyze(command).commands
    assert touched_paths(cmd) == paths


@pytest.mark.parametrize(
    "command",
    ["npm test", "cat $f", "ls --frob x", "xargs cat", "ls > $out", "git frob x", "cd -"],
)
def test_touched_paths_is_none_when_operands_cannot_be_told_apart(command):
    cmd = analyze(command).commands[0]
    assert touched_paths(cmd) is None
