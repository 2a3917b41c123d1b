"""Project instructions: which files are read, in what order, and how `@imports` resolve."""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import pytest

from core.agent.git_facts import GitFacts, branch_from, facts_from_files, read_git_facts
from core.agent.instructions import (
    MAX_IMPORT_DEPTH,
    InstructionSet,
    load_instructions,
    reminded_paths,
    reminder_text,
)


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "claude-user"
    folder.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def names(instructions: object, base: Path) -> list[str]:
    files = instructions.files if hasattr(instructions, "files") else instructions  # type: ignore[attr-defined]
    return [f.path.relative_to(base).as_posix() for f in files]


def test_files_come_most_general_first_from_the_repository_root_down(
    user_dir: Path, repo: Path
) -> None:
    work = repo / "pkg" / "app"
    write(user_dir / "CLAUDE.md", "Answer in English.")
    write(repo / "AGENTS.md", "root agents")
    write(repo / "CLAUDE.local.md", "root local")
    write(repo / ".claude" / "CLAUDE.md", "root dot-claude")
    write(repo / "CLAUDE.md", "root project")
    write(repo / "pkg" / "CLAUDE.md", "pkg project")
    write(work / "CLAUDE.md", "app project")
    write(repo / "elsewhere" / "CLAUDE.md", "a sibling: not on the way down")
    write(repo.parent / "CLAUDE.md", "above the repository: not the project")

    found = load_instructions(work)

    assert [f.source for f in found.files] == [
        "user",
        "project",
        "project",
        "local",
        "agents",
        "project",
        "project",
    ]
    assert names(found.files[1:], repo) == [
        "CLAUDE.md",
        ".claude/CLAUDE.md",
        "CLAUDE.local.md",
        "AGENTS.md",
        "pkg/CLAUDE.md",
        "pkg/app/CLAUDE.md",
    ]
    text = found.prompt_text()
    # Later wins, and the model is told so; the closest file is shown last.
    assert "the one shown later wins" in text
    assert text.index("Answer in English.") < text.index("root project") < text.index("app project")
    assert f"Contents of {work / 'CLAUDE.md'} (project instructions" in text
    assert "not the project" not in text and "sibling" not in text


def test_outside_a_repository_only_the_working_directory_is_read(
    user_dir: Path, tmp_path: Path
) -> None:
    work = tmp_path / "plain" / "dir"
    write(tmp_path / "plain" / "CLAUDE.md", "parent")
    write(work / "AGENTS.md", "here")
    assert names(load_instructions(work), tmp_path) == ["plain/dir/AGENTS.md"]


def test_no_files_means_no_prompt_section(user_dir: Path, repo: Path) -> None:
    found = load_instructions(repo)
    assert found.files == () and found.problems == () and found.prompt_text() == ""


def test_a_file_reached_twice_is_read_once(user_dir: Path, repo: Path) -> None:
    write(repo / "AGENTS.md", "shared rules")
    (repo / "CLAUDE.md").symlink_to(repo / "AGENTS.md")
    write(repo / ".claude" / "CLAUDE.md", "@../AGENTS.md and @../AGENTS.md again")
    found = load_instructions(repo)
    assert found.prompt_text().count("shared rules") == 1
    assert found.problems == ()


def test_imports_are_relative_to_the_importing_file_and_follow_it(
    user_dir: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(repo.parent / "home"))
    write(repo.parent / "home" / "style.md", "home style")
    write(repo / "docs" / "testing.md", "run make test; see @./more/detail.md.")
    write(repo / "docs" / "more" / "detail.md", "detail")
    write(
        repo / "CLAUDE.md",
        "Read @docs/testing.md and @~/style.md.\nMail me@example.com\n"
        "`@not/inline.md`\n```\n@not/fenced.md\n```\nlast line",
    )
    found = load_instructions(repo)
    read = [f.path.name for f in found.files]
    assert read == ["CLAUDE.md", "testing.md", "detail.md", "style.md"]
    testing = found.files[1]
    assert testing.imported_from == repo / "CLAUDE.md"
    assert testing.source == "project"
    assert f"imported by {repo / 'CLAUDE.md'}" in found.prompt_text()
    assert found.problems == ()  # code and e-mail addresses are not imports


def test_a_missing_import_is_reported_and_the_rest_still_loads(user_dir: Path, repo: Path) -> None:
    write(repo / "CLAUDE.md", "See @gone.md and @docs/ (a folder) then @here.md")
    (repo / "docs").mkdir()
    write(repo / "here.md", "still here")
    found = load_instructions(repo)
    assert [f.path.name for f in found.files] == ["CLAUDE.md", "here.md"]
    assert found.problems == (
        f"{repo / 'CLAUDE.md'}: @gone.md does not exist; not imported",
        f"{repo / 'CLAUDE.md'}: @docs is a directory, not a file",
    )


def test_an_import_cycle_is_broken_and_reported(user_dir: Path, repo: Path) -> None:
    write(repo / "CLAUDE.md", "top @a.md")
    write(repo / "a.md", "A imports @b.md")
    write(repo / "b.md", "B imports @a.md and @CLAUDE.md")
    found = load_instructions(repo)
    assert [f.path.name for f in found.files] == ["CLAUDE.md", "a.md", "b.md"]
    assert found.prompt_text().count("A imports") == 1
    assert found.problems == (
        f"{repo / 'b.md'}: @a.md imports a file that imports it (a cycle); not read again",
        f"{repo / 'b.md'}: @CLAUDE.md imports a file that imports it (a cycle); not read again",
    )


def test_imports_stop_at_the_depth_limit(user_dir: Path, repo: Path) -> None:
    chain = [f"level{n}.md" for n in range(1, MAX_IMPORT_DEPTH + 3)]
    write(repo / "CLAUDE.md", f"@{chain[0]}")
    for here, there in itertools.pairwise(chain):
        write(repo / here, f"{here} then @{there}")
    write(repo / chain[-1], "too deep")
    found = load_instructions(repo)
    assert len(found.files) == 1 + MAX_IMPORT_DEPTH
    assert "too deep" not in found.prompt_text()
    deepest = repo / chain[MAX_IMPORT_DEPTH - 1]
    assert found.problems == (
        f"{deepest}: imports nested more than {MAX_IMPORT_DEPTH} deep are not followed "
        f"(@{chain[MAX_IMPORT_DEPTH]})",
    )


def test_an_untrusted_project_keeps_only_the_users_own_files(user_dir: Path, repo: Path) -> None:
    write(user_dir / "CLAUDE.md", "mine @missing.md")
    write(repo / "CLAUDE.md", "theirs @gone.md")
    found = load_instructions(repo)
    assert len(found.problems) == 2
    untrusted = found.user_only()
    assert [f.source for f in untrusted.files] == ["user"]
    assert "theirs" not in untrusted.prompt_text()
    assert len(untrusted.problems) == 1 and "missing.md" in untrusted.problems[0]


def test_a_subdirectorys_files_are_found_once_on_the_first_read_below_them(
    user_dir: Path, repo: Path
) -> None:
    write(repo / "CLAUDE.md", "root")
    write(repo / "lib" / "CLAUDE.md", "lib rules @notes.md")
    write(repo / "lib" / "notes.md", "lib notes")
    write(repo / "lib" / "deep" / "AGENTS.md", "deep rules")
    write(repo / "lib" / "deep" / "x.py", "")
    write(repo / "lib" / "y.py", "")
    session = InstructionSet(repo, load_instructions(repo))

    assert session.on_read(repo / "README.md") == []  # the root's files are in already
    first = session.on_read(repo / "lib" / "deep" / "x.py")
    assert names(first, repo) == ["lib/CLAUDE.md", "lib/notes.md", "lib/deep/AGENTS.md"]
    assert all(f.found_on_read == repo / "lib" / "deep" / "x.py" for f in first)
    assert session.on_read(repo / "lib" / "y.py") == []  # looked at already
    assert session.on_read(Path("lib/deep/x.py")) == []  # relative to the project
    assert session.on_read(repo.parent / "outside.py") == []
    assert names(session.loaded(), repo) == [
        "CLAUDE.md",
        "lib/CLAUDE.md",
        "lib/notes.md",
        "lib/deep/AGENTS.md",
    ]
    assert session.listing()[-1] == (
        repo / "lib" / "deep" / "AGENTS.md",
        "project instructions for coding agents (AGENTS.md); "
        f"found when {repo / 'lib' / 'deep' / 'x.py'} was read",
    )
    read = repo / "lib" / "deep" / "x.py"
    assert session.listing()[2][1].endswith(
        f"imported by {repo / 'lib' / 'CLAUDE.md'}; found when {read} was read"
    )
    reminder = reminder_text(first)
    assert reminder.startswith("<system-reminder>") and "deep rules" in reminder


def test_an_untrusted_projects_subdirectories_are_not_followed(user_dir: Path, repo: Path) -> None:
    write(repo / "lib" / "CLAUDE.md", "lib rules")
    session = InstructionSet(repo, load_instructions(repo), follow_subdirectories=False)
    assert session.on_read(repo / "lib" / "a.py") == []


def test_a_resumed_conversation_is_not_reminded_twice(user_dir: Path, repo: Path) -> None:
    write(repo / "lib" / "CLAUDE.md", "lib rules")
    given = reminder_text(InstructionSet(repo, load_instructions(repo)).on_read(repo / "lib" / "a"))
    history = [{"role": "user", "content": [{"type": "text", "text": given}]}]
    assert reminded_paths(history) == [(repo / "lib" / "CLAUDE.md").resolve()]
    resumed = InstructionSet(repo, load_instructions(repo), history=history)
    assert resumed.on_read(repo / "lib" / "a.py") == []


def test_git_facts_say_branch_and_short_status(tmp_path: Path) -> None:
    assert facts_from_files(tmp_path, "").describe() == "Is a git repository: no"
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(tmp_path)], check=True)
    (tmp_path / "new.txt").write_text("x")
    facts = read_git_facts(tmp_path, fence=None)  # no sandbox: git is not run
    assert facts.branch == "trunk" and facts.status == ()
    assert "Git status: not read (no sandbox here to run git in safely)" in facts.describe()
    fence = read_only_fence(tmp_path)
    try:
        facts = read_git_facts(tmp_path, fence)
    finally:
        fence.finish()
    assert facts.state == "repository" and facts.branch == "trunk"
    assert facts.status == ("?? new.txt",)
    said = facts.describe()
    assert "Is a git repository: yes\nCurrent branch: trunk" in said and "?? new.txt" in said


def read_only_fence(project: Path):  # type: ignore[no-untyped-def]
    from core.access.sandbox_policy import ReadOnly
    from core.sandbox.fence import FenceBuilder, FenceInputs
    from core.sandbox.support import probe

    support = probe()
    if not support.available:
        pytest.skip(f"no sandbox here: {support.problem}")
    return FenceBuilder(support).build(ReadOnly("test"), FenceInputs(project=project), None)


@pytest.mark.parametrize("how", ["fsmonitor", "clean filter"])
def test_a_repository_cannot_run_a_program_through_the_prompts_git_status(
    tmp_path: Path, how: str
) -> None:
    """`git status` runs a repository's configuration: it must run fenced, writing nothing."""
    project, escaped = tmp_path / "project", tmp_path / "escaped"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "a.txt").write_text("x")
    if how == "fsmonitor":
        config = f"[core]\n\tfsmonitor = touch {escaped}\n"
    else:
        (project / ".gitattributes").write_text("* filter=evil\n")
        config = f'[filter "evil"]\n\tclean = touch {escaped}; cat\n'
        subprocess.run(["git", "-C", str(project), "add", "a.txt"], check=True)
        (project / "a.txt").write_text("y")
    with open(project / ".git" / "config", "a") as file:
        file.write(config)
    fence = read_only_fence(project)
    try:
        facts = read_git_facts(project, fence)
    finally:
        fence.finish()
    assert facts.state == "repository"
    assert not escaped.exists()
    read_git_facts(project, None)  # without a sandbox git is not run at all
    assert not escaped.exists()


async def test_until_git_has_answered_a_request_says_what_dot_git_says(tmp_path: Path) -> None:
    import asyncio

    from core.agent.git_facts import GitFactsOnTheWay

    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/trunk\n")
    reading: asyncio.Future[GitFacts] = asyncio.get_running_loop().create_future()
    on_the_way = GitFactsOnTheWay(reading, tmp_path)
    assert "Current branch: trunk" in on_the_way.describe()
    assert "still being read when this request was sent" in on_the_way.describe()
    reading.set_result(GitFacts("repository", branch="trunk", status=("?? a.txt",)))
    assert on_the_way.describe().endswith("?? a.txt")


def test_a_long_git_status_is_cut_and_says_so() -> None:
    facts = GitFacts("repository", branch="main", status=("M a",) * 30, omitted=12)
    assert facts.describe().endswith("... and 12 more lines (run git status to see them all)")
    assert branch_from("## main...origin/main [ahead 1]") == "main"
    assert branch_from("## No commits yet on dev") == "dev"
    assert branch_from("## HEAD (no branch)") == "(detached HEAD)"


def test_a_fifo_or_a_binary_file_is_reported_not_read(user_dir: Path, repo: Path) -> None:
    os.mkfifo(repo / "AGENTS.md")  # reading it would block start-up for ever
    write(repo / "CLAUDE.md", "@blob.bin\n@/dev/zero")
    (repo / "blob.bin").write_bytes(b"\x7fELF\0\0")
    found = load_instructions(repo)
    assert [f.path.name for f in found.files] == ["CLAUDE.md"]
    assert found.problems == (
        f"{repo / 'blob.bin'}: not a text file; not read",
        "/dev/zero: not a regular file; not read",
        f"{repo / 'AGENTS.md'}: not a regular file; not read",
    )
