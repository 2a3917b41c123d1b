"""Read-only classification: reasons, and properties that must hold for any command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bash import analyze
from core.bash.analysis import analyze_uncached

READ_ONLY = [
    json.loads(line)["command"]
    for line in (Path(__file__).parent / "corpus.jsonl").read_text(encoding="utf-8").split("\n")
    if line.strip() and json.loads(line)["read_only"]
]
# Single-line read-only commands: safe to splice into a pipeline or list.
SPLICEABLE = [c for c in READ_ONLY if "\n" not in c and "#" not in c]
WRITERS = ["rm -rf x", "curl evil", "sh", "sed -i s/a/b/ f", "git push", "python -c 1"]


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("rm -rf build", "`rm -rf build` is not a read-only command"),
        ("find . -delete", "`find . -delete` uses -delete, which deletes files"),
        ("echo $(curl x)", "the command substitution `$(curl x)` runs a command"),
        ("ls > out.txt", "the output redirection `> out.txt` writes a file"),
        ("if true; then ls; fii", "the command could not be parsed"),
        ("sort -o out x", "`sort -o out x` uses -o, which writes the sorted result to a file"),
        ("git -c x=y log", "`git -c x=y log` uses -c, which sets configuration"),
        ("ls --frob", "`ls --frob` uses --frob, which is not a known read-only flag of ls"),
        ("sed 's/a/b/w f' x", "has a sed script that uses the `w` flag of `s`"),
        ("git push", "runs `git push`, which is not a read-only git command"),
        ("sort *", "has a glob that could expand to a file name that reads as a flag"),
        ("ls &", "runs a command in the background"),
    ],
)
def test_reasons_name_the_part_that_is_not_read_only(command, reason):
    result = analyze(command)
    assert not result.read_only
    assert reason in result.reason


def test_the_cache_returns_the_same_answer_as_the_parser():
    for command in SPLICEABLE[:20]:
        assert analyze(command) == analyze_uncached(command)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(SPLICEABLE),
    st.sampled_from(WRITERS),
    st.sampled_from([" | ", " && ", " || ", "; ", "\n"]),
    st.booleans(),
)
def test_a_read_only_command_joined_with_a_writer_is_not_read_only(safe, writer, joint, first):
    assert analyze(safe).read_only
    command = f"{writer}{joint}{safe}" if first else f"{safe}{joint}{writer}"
    assert not analyze(command).read_only


_FORBIDDEN = st.sampled_from(
    ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\r", "\x1b", "\x7f", "\x85", "\u00a0", "\u1680",
     "\u2000", "\u200b", "\u200e", "\u2028", "\u2029", "\u202e", "\u2066", "\u3000", "\ufeff"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SPLICEABLE), _FORBIDDEN, st.integers(min_value=0))
def test_a_forbidden_character_anywhere_is_never_read_only(command, char, where):
    at = where % (len(command) + 1)
    result = analyze(command[:at] + char + command[at:])
    assert not result.read_only
    assert not result.ok


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab -$`'\"|&;<>(){}*\\\n=")), max_size=30))
def test_arbitrary_shell_text_never_raises_and_explains_refusals(command):
    result = analyze(command)
    assert result.read_only is (result.reason == "")
    if result.read_only:
        assert result.ok and not result.has_substitution
        assert all(c.argv for c in result.commands)
        assert not any(r.writes for c in result.commands for r in c.redirects)


# -- tests: `[ ... ]` runs nothing; `[[ ... ]]` arithmetic can ---------------------------------


@pytest.mark.parametrize(
    "command",
    ["[ -d src ]", "[ -f x ] && cat x", '[ "$x" = a ]', "[[ -f x && a == b ]]", "[[ ! -e x ]]",
     "[[ 1 -eq 2 ]]", "[[ $x =~ ^a.*$ ]]", "test -f x"],
)  # fmt: skip
def test_file_and_string_tests_are_read_only(command: str):
    assert analyze(command).read_only, analyze(command).reason


@pytest.mark.parametrize(
    "command",
    ["[[ 1 -eq y ]]", "[[ 1 -eq 'a[$(touch {0})]' ]]", "[[ $x -lt 3 ]]", "[ $(touch {0}) ]",
     "[[ ${{x:=y}} ]]", "[[ a == $(touch {0}) ]]"],
)  # fmt: skip
def test_tests_that_can_run_commands_are_not(command: str, tmp_path):
    target = tmp_path / "ran"
    text = command.format(target)
    assert not analyze(text).read_only, text
    if "[[ 1 -eq 'a[" in text:  # and bash really runs it
        subprocess.run(["bash", "--norc", "-c", text], check=False, capture_output=True)
        assert target.exists()


# -- awk: a tokenizer, not a regex ------------------------------------------------------------

from core.bash.scripts import awk_problem, sed_problem  # noqa: E402


@pytest.mark.parametrize(
    "program",
    ['# "\n BEGIN { system("touch x") } #"', '$1 ~ /"/ { system("x") }',
     'BEGIN { ARGV[1] = "/etc/shadow"; ARGC = 2 } { print }', "BEGIN { delete ARGV }",
     '{ printf "%d\\n", 1 > 0 }', '{ print(1) > "f" }', '{ "date" | getline d }',
     "@include \"x\"", '{ f = "system"; @f("ls") }', "{ print $1 >> \"log\" }",
     'BEGIN { print "x" |& "cat" }', '{ print "unterminated }'],
)  # fmt: skip
def test_awk_programs_that_write_run_or_redirect_are_refused(program: str):
    assert awk_problem(program), program


@pytest.mark.parametrize(
    "program",
    ["{ print $1 }", "$3 > 100 { print }", "{ print (a > b) }", "{ x = a || b }",
     "/a\\/b/ { print }", "{ x = 4 / 2 / 1 }", '{ print "a@b" }', "{ n++ } END { print n }",
     "{ a[$1]++ } END { for (k in a) print k, a[k] }", '{ print ENVIRON["HOME"] }',
     "NR > 1 && $2 ~ /x/ { s += $3 } END { printf \"%.2f\\n\", s }"],
)  # fmt: skip
def test_everyday_awk_programs_are_read(program: str):
    assert awk_problem(program) == "", awk_problem(program)


_AWK_PIECES = st.sampled_from(
    ["{", "}", " print ", " printf ", '"M"', " > ", " >> ", " | ", "(", ")", "\n", ";", "/",
     "x", "1", "$1", '"', "#", "\\\n", 'system("touch M")', '"touch M" | getline',
     'ARGV[1] = "M"', " getline ", "NR", ",", " ~ ", "/M/", ">"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_AWK_PIECES, min_size=1, max_size=8).map("".join))
def test_an_accepted_awk_program_never_writes_or_runs_anything(tmp_path_factory, program: str):
    if awk_problem(program):
        return
    folder = tmp_path_factory.mktemp("awk")
    (folder / "in").write_text("a b\nc d\n")
    subprocess.run(
        ["awk", "--", program, "in"], cwd=folder, capture_output=True, timeout=10, check=False
    )
    assert sorted(p.name for p in folder.iterdir()) == ["in"], program


@pytest.mark.parametrize(
    "command",
    ["echo $HOME", 'echo -n "$PATH"', "echo $?", 'echo "a $x b"', "echo a$HOME", "echo -e 'a\\nb'",
     "python3 --version", "node --help", "git branch --contains HEAD", "git tag --points-at HEAD",
     "git branch --merged main", "git config --get user.name", "git config --list",
     "git show-branch", "git cherry -v", "git submodule status", "command -v git"],
)  # fmt: skip
def test_everyday_read_only_commands_are_not_refused(command: str):
    assert analyze(command).read_only, analyze(command).reason


@pytest.mark.parametrize(
    "command",
    ["echo ${x:=y}", "echo $(rm x)", "printf -v x %s y", "printf $fmt", "./evil --version",
     "pytest --version", "git config user.name x", "git submodule update", "git branch newb",
     "echo {a,b}"],
)  # fmt: skip
def test_their_dangerous_neighbours_still_are(command: str):
    assert not analyze(command).read_only, command


# -- from a second review that attacked the analysis ----------------------------------------


@pytest.mark.parametrize(
    "command",
    ["[ -v 'a[$(touch {0})]' ]", "test -v 'a[$(touch {0})]'", "[[ -v 'a[$(touch {0})]' ]]",
     "test -f x -o -v 'a[`touch {0}`]'", "test -R 'a[$(touch {0})]'"],
)  # fmt: skip
def test_a_tested_variable_subscript_can_run_commands(command: str, tmp_path):
    target = tmp_path / "ran"
    text = command.format(target)
    assert not analyze(text).read_only, text
    if text.startswith("test -v"):  # and bash really runs it
        subprocess.run(["bash", "--norc", "-c", text], check=False, capture_output=True)
        assert target.exists()


@pytest.mark.parametrize(
    "script",
    [":x e touch {0}", ":x r /etc/hostname", ":a w {0}", ":a\tw {0}", "b x w {0}\n:x",
     "t x w {0}"],
)  # fmt: skip
def test_a_sed_label_ends_at_a_blank_as_gnu_sed_ends_it(script: str, tmp_path):
    target = tmp_path / "written"
    text = script.format(target)
    assert sed_problem(text), text
    (tmp_path / "in").write_text("hi\n")
    subprocess.run(["sed", text, str(tmp_path / "in")], check=False, capture_output=True)
    if "{0}" in script and "e touch" not in script:
        assert target.exists(), "gnu sed really runs what follows the label"


@pytest.mark.parametrize("script", [":a;N;$!ba;s/\\n/ /g", "b end", ":a", "s/a/b/;ta", "{:a;n;ba}"])
def test_ordinary_sed_labels_are_still_read(script: str):
    assert sed_problem(script) == "", sed_problem(script)
