"""A person's prefix rule allows a program, not every file it can be told to write.

`Bash(sort:*)` or `Bash(git log:*)` reads as "sorting / reading history is fine". A write
named by an option (`sort -o F`, `git log --output=F`, `time -o F`, `find -fprint F`,
`uniq IN OUT`) is judged as a write, exactly as `> F` is: the rule alone does not cover it,
an Edit allow rule over the file does, an Edit deny rule over it denies, and a file that
cannot be named (a flag the table does not know, GNU's abbreviations) asks. A red team
found these running unasked under such rules, outside the project."""

from __future__ import annotations

import pytest
from test_rules_spelling import decide  # the real chain, one Bash call, rules as "allow X"

from core.access.decision import Allow, Ask, Deny
from core.bash import option_writes
from core.bash.parse import parse

RULES = (
    "allow Bash(file:*)",
    "allow Bash(sort:*)",
    "allow Bash(git log:*)",
    "allow Bash(git diff:*)",
    "allow Bash(base64:*)",
    "allow Bash(time:*)",
    "allow Bash(nice:*)",
    "allow Bash(xargs:*)",
    "allow Bash(uniq:*)",
    "allow Bash(find:*)",
    "allow Bash(tree:*)",
    "allow Bash(awk:*)",
)


@pytest.mark.parametrize(
    "command",
    [
        "sort -o /etc/cron.d/x notes.txt",
        "sort --output=/etc/x notes.txt",
        "sort --output /etc/x notes.txt",
        "sort -uo /etc/x notes.txt",  # the writing flag at the end of a cluster
        "sort --out=/etc/x notes.txt",  # GNU's abbreviation: not in the table, so unknown
        "sort --debug --frobnicate -o /etc/x notes.txt",  # the scan stops before -o
        "git log --output=/etc/x",
        "git -C . log --output=/etc/x",
        "/usr/bin/git --no-pager log --output=/etc/x",
        "git diff --output /etc/x",
        "base64 -o /etc/x notes.txt",
        "time -o /etc/x sort notes.txt",
        "nice -n 5 sort -o /etc/x notes.txt",
        "xargs sort -o /etc/x",
        "uniq notes.txt /etc/x",
        "find . -fprint /etc/x -name '*.py'",
        "tree -o /etc/x",
        "awk -o '{print}' notes.txt",  # the profile file left out: its default, unnamed
        "tree -R -H . docs",  # an index file written into every directory
        "file -C -m magic",  # compiled magic written beside its source
        "sort notes.txt && sort -o /etc/x notes.txt",
        "sort -o/etc/x notes.txt",
        "command sort -o /etc/x notes.txt",
        "env -C /etc sort -o passwd notes.txt",
    ],
)
def test_a_write_named_by_an_option_is_not_covered_by_the_programs_rule(command: str):
    decision = decide(command, *RULES)
    assert isinstance(decision, Ask), (command, decision)


@pytest.mark.parametrize(
    "command", ["sort notes.txt", "git log --oneline -5", "uniq notes.txt", "tree -L 2"]
)
def test_the_same_rules_still_allow_what_writes_nothing(command: str):
    assert isinstance(decide(command, *RULES), Allow), command


def test_an_edit_rule_over_the_file_covers_the_write_and_a_deny_rule_refuses_it():
    inside = "sort -o out/sorted.txt notes.txt"
    assert isinstance(decide(inside, *RULES), Ask)  # like `sort notes.txt > out/sorted.txt`
    assert isinstance(decide(inside, *RULES, "allow Edit(out/**)"), Allow)
    assert isinstance(decide(f"{inside} > out/b.txt", *RULES, "allow Edit(out/**)"), Allow)
    # The Edit rule covers the file where it is really written, not where it looks written.
    moved = "env -C /etc sort -o out/x notes.txt"
    assert isinstance(decide(moved, *RULES, "allow Bash(env:*)", "allow Edit(out/**)"), Ask)
    denied = decide("sort -o /etc/x notes.txt", "deny Edit(//etc/**)", mode="bypassPermissions")
    assert isinstance(denied, Deny)
    assert isinstance(
        decide("git log --output=/etc/x", "deny Edit(//etc/**)", mode="bypassPermissions"), Deny
    )


def test_accept_edits_does_not_take_an_option_write_outside_the_project():
    decision = decide("sort -o /etc/x notes.txt", *RULES, mode="acceptEdits")
    assert isinstance(decision, Ask)


@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("sort -o a.txt b.txt", ("a.txt",)),
        ("sort -rno a.txt b.txt", ("a.txt",)),
        ("git diff --output=d.patch", ("d.patch",)),
        ("time -o t.log sort -o s.txt x", ("t.log", "s.txt")),
        ("find . -fprintf f.txt %p", ("f.txt",)),
        ("uniq in.txt out.txt", ("out.txt",)),
        ("sort --out=a.txt b.txt", (None,)),
        ("awk -px.prof '{}' f", ("x.prof",)),
        ("awk -p '{}' f", (None,)),  # gawk's default profile file: not named here
        ("env -C /etc sort -o passwd b.txt", ("/etc/passwd",)),  # written where it runs
        ("sort b.txt", ()),
        ("cat a.txt", ()),
    ],
)
def test_option_writes_names_each_file_written(command: str, written: tuple[str | None, ...]):
    (simple,) = parse(command).commands
    assert option_writes(simple) == written
