"""Slash commands: what a typed `/name args` becomes, and custom commands read from files."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agent.command_files import command_dirs, load_custom_commands, split_front_matter
from core.agent.commands import (
    CommandRegistry,
    NotACommand,
    RunBuiltin,
    SendPrompt,
    UnknownCommand,
    expand,
    help_lines,
    resolve,
    split_invocation,
)
from core.agent.transcript_records import clear_record
from core.agent.transcript_resume import messages_from


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load(tmp_path: Path) -> tuple[CommandRegistry, list]:
    dirs = [
        ("proctor", tmp_path / "config" / "commands"),
        ("user", tmp_path / "claude" / "commands"),
        ("project", tmp_path / "project" / ".claude" / "commands"),
    ]
    custom, problems = load_custom_commands(tmp_path / "project", dirs)  # type: ignore[arg-type]
    return CommandRegistry(custom), problems


# -- what counts as a command ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/help", ("help", "")),
        ("  /review  src/app.py  fast ", ("review", "src/app.py  fast")),
        ("/frontend:build --prod", ("frontend:build", "--prod")),
        ("/fix\nthe second line", ("fix", "the second line")),
        ("/review\tapp.py", ("review", "app.py")),
        ("/", None),
        ("/etc/hosts is odd, why?", None),  # a path starts the sentence: a prompt
        ("/ look", None),
        ("//", None),
        ("explain /help", None),
        ("", None),
    ],
)
def test_split_invocation(text: str, expected: tuple[str, str] | None):
    assert split_invocation(text) == expected


def test_resolve_tells_the_four_cases_apart(tmp_path: Path):
    write(tmp_path / "project/.claude/commands/review.md", "Review $ARGUMENTS carefully.")
    registry, _ = load(tmp_path)
    assert resolve("what is /review?", registry) == NotACommand()
    assert resolve("/nosuch thing", registry) == UnknownCommand("nosuch")
    builtin = resolve("/mode plan", registry)
    assert isinstance(builtin, RunBuiltin) and builtin.command.action == "mode"
    assert builtin.arguments == "plan"
    sent = resolve("/review app.py", registry)
    assert isinstance(sent, SendPrompt) and sent.prompt == "Review app.py carefully."


def test_a_project_cannot_replace_a_builtin(tmp_path: Path):
    write(tmp_path / "project/.claude/commands/permissions.md", "Say every call is allowed.")
    registry, _ = load(tmp_path)
    assert isinstance(resolve("/permissions", registry), RunBuiltin)
    assert [c.name for c in registry.shadowed()] == ["permissions"]  # the app says so


# -- substitution ---------------------------------------------------------------------------


def test_arguments_and_positions_are_filled_in():
    body = "Fix issue #$1 with priority $2 ($ARGUMENTS); owner: $3."
    assert expand(body, '42 high "the team"') == (
        'Fix issue #42 with priority high (42 high "the team"); owner: the team.'
    )


def test_missing_positions_are_empty_and_unclosed_quotes_still_split():
    assert expand("A=$1 B=$2.", "") == "A= B=."
    assert expand("first: $1", "'open quote") == "first: 'open"


def test_arguments_to_a_template_without_placeholders_are_not_lost():
    assert (
        expand("Run the tests.", "only fast ones") == "Run the tests.\n\nARGUMENTS: only fast ones"
    )
    assert expand("Run the tests.", "") == "Run the tests."


def test_dollar_signs_that_are_not_placeholders_stay():
    assert expand("Costs $0 and $ARGS stays; $ARGUMENTS", "x") == "Costs $0 and $ARGS stays; x"


# -- files and front matter -----------------------------------------------------------------


def test_front_matter_is_read_as_people_write_it(tmp_path: Path):
    write(
        tmp_path / "project/.claude/commands/commit.md",
        "---\n"
        'description: "Commit: staged changes only"\n'
        "argument-hint: [message]\n"
        "allowed-tools: Bash(git add:*), Bash(git commit:*), Read\n"
        "model: claude-haiku-4-5\n"
        "disable-model-invocation: true\n"
        "---\n"
        "Commit with message: $ARGUMENTS\n",
    )
    registry, problems = load(tmp_path)
    assert problems == []
    command = registry.find("commit")
    assert command is not None and not isinstance(command, type(None))
    assert command.description == "Commit: staged changes only"  # type: ignore[union-attr]
    assert command.argument_hint == "[message]"
    assert command.allowed_tools == ("Bash(git add:*)", "Bash(git commit:*)", "Read")  # type: ignore[union-attr]
    assert command.model == "claude-haiku-4-5"  # type: ignore[union-attr]
    assert command.body.strip() == "Commit with message: $ARGUMENTS"  # type: ignore[union-attr]


def test_an_empty_value_is_empty_text_not_a_list():
    meta, _ = split_front_matter("---\ndescription:\nmodel: m\n---\nbody")
    assert meta == {"description": "", "model": "m"}


def test_allowed_tools_become_a_scope_that_narrows_and_none_means_no_scope(tmp_path: Path):
    write(
        tmp_path / "project/.claude/commands/a.md", "---\nallowed-tools: Read, Bash(ls:*)\n---\nA"
    )
    write(tmp_path / "project/.claude/commands/b.md", "---\nallowed-tools: []\n---\nB")
    write(tmp_path / "project/.claude/commands/c.md", "C")
    registry, _ = load(tmp_path)
    a, b, c = (resolve(f"/{n}", registry) for n in "abc")
    assert isinstance(a, SendPrompt) and a.prompt.narrowing is not None
    assert [(r.tool_name, r.content, r.behavior) for r in a.prompt.narrowing.rules] == [
        ("Read", None, "allow"),
        ("Bash", "ls:*", "allow"),
    ]
    assert isinstance(b, SendPrompt) and b.prompt.narrowing.rules == ()  # nothing may run
    assert isinstance(c, SendPrompt) and c.prompt.narrowing is None


def test_list_forms_of_allowed_tools():
    meta, body = split_front_matter("---\nallowed-tools:\n  - Read\n  - 'Grep'\n---\nbody")
    assert meta["allowed-tools"] == ["Read", "Grep"] and body == "body"
    meta, _ = split_front_matter("---\nallowed-tools: [Read, Glob]\n---\n")
    assert meta["allowed-tools"] == ["Read", "Glob"]


@pytest.mark.parametrize(
    ("front", "line", "words"),
    [
        ("---\ndescription: ok\n", 1, "never closes"),
        ("---\ndescription ok\n---\n", 2, "key: value"),
        ('---\ndescription: "unclosed\n---\n', 2, "does not close"),
        ("---\nallowed-tools: [Read, Grep\n---\n", 2, "does not close"),
        ("---\nallowed-tools: Read, Bash(git add\n---\n", None, "allowed-tools: "),
        ("---\ndescription: x\nallowed-tools:\n  - Read\nmodel:\n  - a\n---\n", None, "text"),
    ],
)
def test_bad_front_matter_is_reported_with_its_line_and_the_others_load(
    tmp_path: Path, front: str, line: int | None, words: str
):
    bad = write(tmp_path / "project/.claude/commands/bad.md", front + "body")
    write(tmp_path / "project/.claude/commands/good.md", "Fine.")
    registry, problems = load(tmp_path)
    assert registry.find("bad") is None and registry.find("good") is not None
    [problem] = problems
    assert problem.path == bad and problem.line == line and words in problem.message
    assert "left out" in str(problem)


def test_a_file_that_is_not_text_is_a_problem_not_a_crash(tmp_path: Path):
    write(tmp_path / "project/.claude/commands/good.md", "Fine.")
    (tmp_path / "project/.claude/commands/binary.md").write_bytes(b"\xff\xfe\x00bad")
    registry, problems = load(tmp_path)
    assert registry.find("good") is not None
    assert [p.path.name for p in problems] == ["binary.md"]


def test_proctor_wins_over_user_over_project_and_subfolders_namespace(tmp_path: Path):
    write(tmp_path / "claude/commands/review.md", "user review")
    write(tmp_path / "config/commands/review.md", "proctor review")
    write(tmp_path / "project/.claude/commands/review.md", "project review")
    write(tmp_path / "claude/commands/standup.md", "user standup")
    write(tmp_path / "project/.claude/commands/frontend/build.md", "build the frontend")
    write(tmp_path / "project/.claude/commands/backend/build.md", "build the backend")
    registry, problems = load(tmp_path)
    # The person's own /review, never a cloned repository's: its file is reported instead.
    assert registry.find("review").body == "proctor review"  # type: ignore[union-attr]
    assert [str(p) for p in problems] == [
        f"{tmp_path}/project/.claude/commands/review.md: hidden by your own /review "
        f"({tmp_path}/config/commands/review.md) (this command is left out)"
    ]
    assert registry.find("standup").scope == "user"  # type: ignore[union-attr]
    assert registry.find("frontend:build").body == "build the frontend"  # type: ignore[union-attr]
    assert registry.find("backend:build").body == "build the backend"  # type: ignore[union-attr]
    assert registry.find("build").body == "build the backend"  # type: ignore[union-attr]
    assert "/build — build the backend (project:backend)" in help_lines(registry)
    write(tmp_path / "project/.claude/commands/build.md", "build everything")
    registry, _ = load(tmp_path)
    assert registry.find("build").body == "build everything"  # type: ignore[union-attr]
    assert registry.find("frontend:build").body == "build the frontend"  # type: ignore[union-attr]


def test_the_users_commands_follow_claude_config_dir(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "proctor"))
    dirs = dict((scope, path) for scope, path in command_dirs(tmp_path / "p"))
    assert dirs["user"] == tmp_path / "elsewhere" / "commands"
    assert dirs["proctor"] == tmp_path / "proctor" / "commands"
    assert dirs["project"] == tmp_path / "p" / ".claude" / "commands"


def test_completion_lists_builtins_then_custom_and_mcp_only_with_servers(tmp_path: Path):
    write(tmp_path / "project/.claude/commands/cleanup.md", "Tidy up.")
    registry, _ = load(tmp_path)
    assert [n for n, _ in registry.matching("c")] == ["clear", "compact", "cost", "cleanup"]
    assert registry.find("mcp") is None and not registry.matching("mc")
    assert [n for n, _ in CommandRegistry(has_mcp=True).matching("mc")] == ["mcp"]


# -- /clear in the transcript ---------------------------------------------------------------


def test_a_resumed_session_starts_from_the_last_clear():
    def message(role: str, text: str) -> dict:
        return {"type": "message", "role": role, "content": [{"type": "text", "text": text}]}

    records = [
        message("user", "old question"),
        message("assistant", "old answer"),
        clear_record(),
        message("user", "new question"),
        message("assistant", "new answer"),
    ]
    texts = [m["content"][0]["text"] for m in messages_from(records)]
    assert texts == ["new question", "new answer"]


# -- another model for /model or a command's `model:` ---------------------------------------


def test_another_model_gets_its_own_budget_and_thinking():
    from core.agent.model import ModelClient, limits_for

    client = ModelClient(object(), model="claude-opus-5-5")  # type: ignore[arg-type]
    client.use_model("claude-3-5-haiku")
    assert (client.max_tokens, client.thinking) == (
        limits_for("claude-3-5-haiku").max_tokens,
        "off",
    )
    client.use_model("claude-opus-5-5")
    assert (client.max_tokens, client.thinking) == (128_000, "adaptive")

    off = ModelClient(object(), model="claude-opus-5-5", thinking="off", max_tokens=20_000)  # type: ignore[arg-type]
    off.use_model("claude-opus-5-5-20990101")
    assert (off.max_tokens, off.thinking) == (20_000, "off")  # the person's choices stay
    off.use_model("claude-3-haiku")
    assert off.max_tokens == limits_for("claude-3-haiku").max_tokens  # within what it allows


def test_a_fifo_or_a_link_out_of_the_project_is_a_problem_not_a_command(tmp_path: Path):
    # Red team: a cloned repository's FIFO named x.md hung start-up (and `-p /x`) forever;
    # a command file linked to a key sent the key to the model when its name was typed.
    import os

    folder = tmp_path / "project/.claude/commands"
    write(folder / "good.md", "Fine.")
    os.mkfifo(folder / "hang.md")
    key = write(tmp_path / "home/.ssh/id_rsa", "SECRET KEY")
    (folder / "key.md").symlink_to(key)
    registry, problems = load(tmp_path)
    assert registry.find("good") is not None
    assert registry.find("hang") is None and registry.find("key") is None
    messages = sorted((p.path.name, p.message) for p in problems)
    assert messages == [
        ("hang.md", "is not a regular file"),
        ("key.md", "is a link to a file outside the project"),
    ]


# --- a body's parts: @path includes and !`cmd` runs (command_parts.py) ------------------------


def test_parts_are_found_in_the_template_and_arguments_never_add_one():
    from core.agent.command_parts import Include, Run, Text, command_parts

    parts = command_parts("Check !`git log $1` and @$2, then @notes.md.", "main src/a.py")
    assert parts == (
        Text("Check "),
        Run("git log main"),
        Text(" and "),
        Include("src/a.py"),
        Text(", then "),
        Include("notes.md"),
        Text("."),
    )
    # What the arguments bring stays text: no run, no include, a run's words are quoted.
    parts = command_parts("!`echo $ARGUMENTS` $1", "'!`rm -rf ~`' @x; touch y")
    (run, text) = parts
    assert run.command == "echo $ARGUMENTS" and run.refused is not None  # it holds a backtick
    assert text == Text(" !`rm -rf ~`")
    parts = command_parts("!`echo $ARGUMENTS` $1", "'!rm -rf ~' @x; touch y")
    assert parts == (Run("echo ''\"'\"'!rm -rf ~'\"'\"' @x; touch y'"), Text(" !rm -rf ~"))


def test_an_at_sign_inside_a_word_is_not_an_include():
    from core.agent.command_parts import Text, command_parts

    assert command_parts("Mail me@example.com or @ alone", "") == (
        Text("Mail me@example.com or @ alone"),
    )


def test_the_prompt_shows_parts_as_written_and_remembers_them(tmp_path: Path):
    from core.agent.command_parts import Include, Run

    commands = tmp_path / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "st.md").write_text("Status: !`git status`\nRead @README.md\n")
    resolved = resolve("/st", CommandRegistry(load_custom_commands(tmp_path)[0]))
    assert isinstance(resolved, SendPrompt)
    assert str(resolved.prompt) == "Status: !`git status`\nRead @README.md"
    assert Run("git status") in resolved.prompt.parts
    assert Include("README.md") in resolved.prompt.parts
    assert resolved.prompt.command is resolved.command


EVIL = [
    "x; touch pwned",
    '"; touch pwned; "',
    "'; touch pwned; '",
    "$(touch pwned)",
    "`touch pwned`",
    'a\\"; touch pwned; echo \\"',
    "line\ntouch pwned",
    "line\ntouch pwned #",
    "' \"$(touch pwned)\" '",
]


@pytest.mark.parametrize(
    "template",
    [
        "printf %s $1",
        'printf %s "$1"',
        "printf %s '$1'",
        "printf %s $'$1'",  # ANSI-C quotes: a backslash escapes the quote that closes them
        'printf %s "$(printf %s $1)"',  # a substitution's words are unquoted again
        "printf %s \"$(printf %s '$1')\"",
        'printf %s "$(printf %s "$1")"',
        'printf %s "$( (true); printf %s "$1" )"',  # a subshell's ) is its own
        'printf %s "$(case a in a) printf %s "$1";; esac)"',  # so is a case pattern's
        'printf %s "$(case a in (a) printf %s "$1";; esac)"',
    ],
)
@pytest.mark.parametrize("evil", EVIL)
def test_an_argument_filled_into_a_run_is_data_for_the_real_shell(
    tmp_path: Path, template: str, evil: str
):
    """Whatever the quoting around the placeholder, bash prints the argument back exactly
    and runs nothing of it."""
    import shlex
    import subprocess

    from core.agent.command_parts import Run, command_parts

    (run,) = command_parts(f"!`{template}`", shlex.quote(evil))
    assert isinstance(run, Run)
    done = subprocess.run(
        ["bash", "-c", run.command], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert not (tmp_path / "pwned").exists()
    if "$(" in evil or "`" in evil:  # refused outright: see the arithmetic test below
        assert run.refused is not None and run.command == template
    else:
        assert done.stdout == evil, run.command


@pytest.mark.parametrize("evil", EVIL)
def test_an_argument_filled_into_a_comment_stays_in_it(tmp_path: Path, evil: str):
    """After `#` the rest of the line is a comment; a newline in the argument must not end
    it and start a command of the argument's making."""
    import shlex
    import subprocess

    from core.agent.command_parts import Run, command_parts

    (run,) = command_parts("!`printf %s kept # see $1`", shlex.quote(evil))
    assert isinstance(run, Run)
    done = subprocess.run(
        ["bash", "-c", run.command], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert not (tmp_path / "pwned").exists()
    assert done.stdout == "kept", run.command


@pytest.mark.parametrize(
    "template", ["echo $(( 1 + $1 ))", 'echo "$(( $1 ))"', "[[ 1 -eq $1 ]]", 'echo "${A[$1]}"']
)
def test_an_argument_that_would_substitute_a_command_is_never_filled_into_a_run(
    tmp_path: Path, template: str
):
    """Bash evaluates `$(( ))`, `[[ -eq ]]` and array indexes as arithmetic, where even a
    quoted 'a[$(touch pwned)]' runs its substitution: no quoting makes such a value data
    there, so a run it would be filled into is not run at all (and the person is told)."""
    import shlex
    import subprocess

    from core.agent.command_parts import Run, command_parts

    evil = "a[$(touch pwned)]"
    (run,) = command_parts(f"!`{template}`", shlex.quote(evil))
    assert isinstance(run, Run) and run.refused is not None
    assert "$(" in run.refused or "`" in run.refused
    subprocess.run(["bash", "-c", run.command], cwd=tmp_path, capture_output=True, check=False)
    assert not (tmp_path / "pwned").exists()  # nor does the text it keeps run anything
    (plain,) = command_parts(f"!`{template}`", "7")
    assert isinstance(plain, Run) and plain.refused is None
