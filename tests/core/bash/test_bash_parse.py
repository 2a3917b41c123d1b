"""Parsing: simple commands, argv after quote removal, redirections, structural refusals."""

from __future__ import annotations

import pytest

from core.bash import Redirect, analyze


def only(command: str):
    result = analyze(command)
    assert len(result.commands) == 1, result.commands
    return result.commands[0]


def test_argv_is_the_words_after_quote_removal():
    cmd = only("""grep -e 'a b' "c\\"d" e\\ f $'\\x41' -- x""")
    assert cmd.argv == ("grep", "-e", "a b", 'c"d', "e f", "A", "--", "x")


def test_leading_assignments_are_kept_apart_from_argv():
    cmd = only("LANG=C TZ=UTC ls -la")
    assert cmd.assignments == ("LANG=C", "TZ=UTC")
    assert cmd.argv == ("ls", "-la")
    assert cmd.text == "LANG=C TZ=UTC ls -la"


@pytest.mark.parametrize(
    "command", ["ls $x", 'cat "$HOME/x"', "echo ${a:-b}", "echo {a,b}", "ls $((1))"]
)
def test_words_bash_would_still_expand_make_argv_none(command):
    assert only(command).argv is None


def test_a_leading_tilde_stays_literal_but_is_never_read_only():
    result = analyze("rm -rf ~ ~/x")
    assert result.commands[0].argv == ("rm", "-rf", "~", "~/x")
    assert not analyze("cat ~/.ssh/id_rsa").read_only


def test_globs_stay_literal():
    assert only("ls *.py src/[ab]?").argv == ("ls", "*.py", "src/[ab]?")


def test_redirections_are_reported_with_what_they_write():
    cmd = only("cat < in.txt > out.txt 2>&1 2>>err.log >/dev/null")
    assert cmd.redirects == (
        Redirect("<", "in.txt", False),
        Redirect(">", "out.txt", True),
        Redirect("2>&", "1", False),
        Redirect("2>>", "err.log", True),
        Redirect(">", "/dev/null", False),
    )
    assert cmd.text == "cat < in.txt > out.txt 2>&1 2>>err.log >/dev/null"


def test_a_non_static_target_is_a_write_with_no_target():
    assert only('ls > "$f"').redirects == (Redirect(">", None, True),)


def test_a_group_redirection_applies_to_every_command_in_it():
    result = analyze("{ ls; pwd; } > out")
    assert [c.redirects for c in result.commands] == [(Redirect(">", "out", True),)] * 2
    assert result.reason == "the output redirection `> out` writes a file"


def test_every_simple_command_is_found_in_source_order():
    result = analyze('a | b && (c; { d; }) || if e; then f $(g `h`); fi; cat <(i) >(j) <<<"$(k)"')
    names = [cmd.argv[0] if cmd.argv else cmd.text for cmd in result.commands]
    assert names == [
        "a",
        "b",
        "c",
        "d",
        "e",
        "f $(g `h`)",
        "g `h`",
        "h",
        'cat <(i) >(j) <<<"$(k)"',
        "i",
        "j",
        "k",
    ]
    assert result.has_substitution
    assert result.subcommand_texts()[0] == "a"


def test_commands_inside_assignments_and_declarations_are_found():
    result = analyze("X=$(rm x) ls; export A=$(curl y)")
    texts = result.subcommand_texts()
    assert "rm x" in texts and "curl y" in texts
    assert result.commands[-2].argv is None  # export A=$(...)


def test_a_newline_separates_commands():
    assert analyze("ls\nrm x").subcommand_texts() == ("ls", "rm x")


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        ("if true; then", "missing `fi`"),
        ("ls )", "syntax error near `)`"),
    ],
)
def test_parse_errors_are_not_ok_and_say_where(command, fragment):
    result = analyze(command)
    assert not result.ok and not result.read_only
    assert result.reason.startswith("the command could not be parsed")
    assert fragment in result.reason


@pytest.mark.parametrize("char", ["\x00", "\r", "\x1b", "\u2028", "\u00a0", "\u200b", "\u202e"])
def test_forbidden_characters_make_the_command_not_ok(char):
    result = analyze(f"ls{char} -la")
    assert not result.ok and not result.read_only
    assert "character U+" in result.reason


def test_more_than_fifty_subcommands_is_not_ok():
    assert analyze("; ".join(["ls"] * 50)).ok
    result = analyze("; ".join(["ls"] * 51))
    assert not result.ok and "more than 50" in result.reason


def test_tab_and_newline_are_ordinary_whitespace():
    assert analyze("ls\t-la\npwd").read_only


def test_empty_command_is_not_read_only():
    assert not analyze("   ").read_only


# -- $'...' decoded as bash decodes it, or not at all ---------------------------------------

import subprocess  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from core.bash.grammar import ansi_c  # noqa: E402

_OCTAL = st.text("01234567", min_size=1, max_size=3)
_HEX = st.text("0123456789abcdefABCDEF", min_size=1, max_size=8)
_ESCAPES = st.one_of(
    _OCTAL.map(lambda d: "\\" + d),
    st.tuples(st.sampled_from("xuU"), _HEX).map(lambda p: "\\" + p[0] + p[1]),
    st.sampled_from("abeEfnrtv\\\"?cqz'").map(lambda c: "\\" + c),
)
_PIECES = st.one_of(_ESCAPES, st.sampled_from(list('ax7 -é"')))


def bash_bytes(body: str) -> bytes:
    script = f"printf '%s' $'{body}'"
    return subprocess.run(["bash", "--norc", "-c", script], capture_output=True, check=True).stdout


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=6).map("".join))
def test_ansi_c_strings_decode_to_what_bash_prints_or_to_nothing(body: str):
    decoded = ansi_c(body)
    if decoded is not None:
        assert decoded.encode("utf-8") == bash_bytes(body), body


@pytest.mark.parametrize(
    "body", ["\\777", "\\xff", "\\u00e9", "\\U0001F600", "\\0x", "\\x00", "\\cA"]
)
def test_ansi_c_escapes_bash_turns_into_bytes_are_not_static(body: str):
    assert ansi_c(body) is None
