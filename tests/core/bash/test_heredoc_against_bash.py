"""Here-documents judged against bash itself. Bash ends a document at the line that equals
its delimiter with the quotes removed (`<<E"O"F` ends at `EOF`, and quoting any part of it
turns expansion off in the body). If the analysis reads the delimiter any other way, it
sees a body where bash sees commands. So: whatever the analysis calls read-only is run by
bash in an empty directory, and must leave it empty."""

from __future__ import annotations

import os
import subprocess
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bash import analyze

_QUOTINGS = st.sampled_from(["plain", "single", "double", "backslash"])


@st.composite
def delimiters(draw: st.DrawFn) -> tuple[str, str]:
    """(the delimiter as written, the line that ends the document)."""
    word = draw(st.sampled_from(["EOF", "END", "X_1", "e"]))
    written = ""
    for char in word:
        how = draw(_QUOTINGS)
        written += {"plain": char, "single": f"'{char}'", "double": f'"{char}"'}.get(
            how, "\\" + char
        )
    return written, word


_LINES = st.sampled_from(
    ["hello", "$(touch from-body)", "`touch from-backquote`", "EOF", "END", "e", "X_1",
     "'EOF'", '"END"', "\\EOF", "EOF ", " EOF", " e", "\tEOF", "\tEND", "touch from-line"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(delimiters(), st.booleans(), st.lists(_LINES, max_size=4), st.lists(_LINES, max_size=3))
def test_what_the_analysis_calls_read_only_leaves_no_trace_when_bash_runs_it(
    delimiter: tuple[str, str], strip_tabs: bool, body: list[str], after: list[str]
):
    written, ending = delimiter
    operator = "<<-" if strip_tabs else "<<"
    # The delimiter as written closes it again at the end: a parser that waits for that
    # line sees everything between as the document (bash ends it at `ending`).
    lines = [f"cat {operator}{written}", *body, ending, *after, "touch after-end", written]
    command = "\n".join(lines)
    if not analyze(command).read_only:
        return
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            ["bash", "-c", command],
            cwd=scratch,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=20,
            check=False,
        )
        assert os.listdir(scratch) == [], command


def test_a_plainly_delimited_document_is_read_only_and_one_partly_quoted_is_refused():
    # The property above only bites when the analysis calls something read-only: plain
    # documents are, so the misreadings it looks for would show.
    assert analyze("cat <<EOF\n$(touch x)\nEOF\nls").read_only is False
    assert analyze("cat <<'EOF'\n$(touch x)\nEOF\nls").read_only is True
    assert analyze("cat <<-EOF\n\thello\n\tEOF\nls").read_only is True
    assert analyze('cat <<E"O"F\nhello\nEOF\nls').read_only is False


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(
        ["echo ${x@P}", "echo ${x@E}", "echo $(( a[{c}] ))", "[[ a -eq b[{c}] ]]",
         "test -v 'b[{c}]'", "declare -a 'x=({c})'", "printf -v 'x[{c}]' y",
         "echo ${{x:-{c}}}", "cat <<< \"{c}\"", "read -r x <<< y", "echo ${{!x}}"]
    ),
    st.sampled_from(["$(touch p)", "`touch p`", "$(touch p)$(touch q)"]),
)  # fmt: skip
def test_forms_that_can_run_commands_are_never_read_only(form: str, substitution: str):
    command = form.replace("{c}", substitution) if "{c}" in form else form
    command = command.replace("{{", "{").replace("}}", "}")
    assert not analyze(command).read_only, command


@pytest.mark.parametrize(
    "command",
    ["[ x > out ]", "[ x >> out ]", "[ a < /etc/shadow ]", "tree -Lo 1 out.txt",
     "tree -Po '*' out.txt", "gawk -d 'BEGIN{}'", "awk --dump-variables=/tmp/x 'BEGIN{}'",
     "git branch --abbrev --edit-description", "git branch --abbrev --unset-upstream",
     "git grep --textconv x", "jq -n 'import \"creds\" as $c; $c'", "jq -n 'include \"m\"; 1'"],
)  # fmt: skip
def test_second_round_writers_and_readers_are_not_read_only(command: str):
    """Found by attacking the analysis: each writes a file or reads names it cannot see."""
    assert not analyze(command).read_only, command
