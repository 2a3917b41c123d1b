"""`.claude/rules`, HTML comments, and the switch that turns the user's Claude folder off."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agent.instruction_rules import strip_html_comments
from core.agent.instructions import InstructionSet, load_instructions
from core.settings.read import load_settings


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "claude-user"
    folder.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("PROCTOR_NO_CLAUDE_SETTINGS", raising=False)
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


def test_rules_come_after_the_claude_md_files_in_path_order_and_before_local(
    user_dir: Path, repo: Path
) -> None:
    write(user_dir / "CLAUDE.md", "mine")
    write(user_dir / "rules" / "tone.md", "Be brief.")
    write(repo / "CLAUDE.md", "root")
    write(repo / ".claude" / "CLAUDE.md", "dot-claude")
    write(repo / ".claude" / "rules" / "testing.md", "Run pytest.")
    write(repo / ".claude" / "rules" / "frontend" / "react.md", "Hooks only.")
    write(repo / ".claude" / "rules" / "api.md", "Version every route.")
    write(repo / ".claude" / "rules" / "notes.txt", "not a rule: not markdown")
    write(repo / "CLAUDE.local.md", "local")

    found = load_instructions(repo)

    shown = [(f.source, f.path.name) for f in found.files]
    assert shown == [
        ("user", "CLAUDE.md"),
        ("user", "tone.md"),
        ("project", "CLAUDE.md"),
        ("project", "CLAUDE.md"),
        ("rules", "api.md"),
        ("rules", "react.md"),
        ("rules", "testing.md"),
        ("local", "CLAUDE.local.md"),
    ]
    text = found.prompt_text()
    assert text.index("Version every route.") < text.index("Hooks only.") < text.index("local")
    assert "not a rule" not in text
    # An untrusted project keeps only the person's own files, their rules among them.
    assert [f.path.name for f in found.user_only().files] == ["CLAUDE.md", "tone.md"]


def test_html_comments_outside_code_never_reach_the_model(user_dir: Path, repo: Path) -> None:
    write(repo / "secret-plan.md", "imported")
    write(
        repo / "CLAUDE.md",
        "Use tabs.\n"
        "<!-- maintainers: revisit after the 2.0 release -->\n"
        "Keep lines short. <!-- inline note --> Test first.\n"
        "<!--\n@secret-plan.md\nmulti-line note\n-->\n"
        "```html\n<!-- kept: an example inside a fence -->\n```\n"
        "Write `<!-- this too -->` for a comment.\n",
    )

    found = load_instructions(repo)

    assert [f.path.name for f in found.files] == ["CLAUDE.md"]  # the commented import is not read
    text = found.files[0].text
    assert "maintainers" not in text and "inline note" not in text and "multi-line" not in text
    assert text == (
        "Use tabs.\n"
        "Keep lines short.  Test first.\n"
        "```html\n<!-- kept: an example inside a fence -->\n```\n"
        "Write `<!-- this too -->` for a comment.\n"
    )


def test_a_comment_in_an_indented_code_block_is_an_example_and_kept() -> None:
    """Four spaces after a blank line make a code block as a fence does: the comment in it
    is what the example shows, not a note for people."""
    text = (
        "Mark generated files:\n\n    <!-- generated: do not edit -->\n    <header/>\n\n"
        "Done. <!-- a note -->\n"
    )
    assert strip_html_comments(text) == (
        "Mark generated files:\n\n    <!-- generated: do not edit -->\n    <header/>\n\nDone. \n"
    )


def test_a_comment_never_closed_is_left_as_written() -> None:
    text = "Rule one.\n<!-- forgot to close\nRule two.\n"
    assert strip_html_comments(text) == text


def test_a_scoped_rule_joins_only_when_a_file_it_covers_is_read(user_dir: Path, repo: Path) -> None:
    write(
        repo / ".claude" / "rules" / "api.md",
        '---\npaths:\n  - "src/api/**/*.py"\n---\nEvery handler checks the token.\n',
    )
    write(repo / ".claude" / "rules" / "general.md", "---\ndescription: x\n---\nBe kind.\n")
    start = load_instructions(repo)
    assert [f.path.name for f in start.files] == ["general.md"]
    assert "description" not in start.prompt_text()  # front matter is not instructions
    assert "checks the token" not in start.prompt_text()
    session = InstructionSet(repo, start)

    assert session.on_read(repo / "src" / "web" / "page.py") == []
    joined = session.on_read(repo / "src" / "api" / "v1" / "users.py")
    assert [f.path.name for f in joined] == ["api.md"]
    assert joined[0].text.strip() == "Every handler checks the token."
    assert joined[0].found_on_read == repo / "src" / "api" / "v1" / "users.py"
    assert "for files matching src/api/**/*.py" in joined[0].describe()
    assert session.on_read(repo / "src" / "api" / "orders.py") == []  # given once
    assert [f.path.name for f in session.loaded()] == ["general.md", "api.md"]


def test_a_subdirectorys_rules_join_with_its_claude_md(user_dir: Path, repo: Path) -> None:
    write(repo / "pkg" / "CLAUDE.md", "pkg notes")
    write(repo / "pkg" / ".claude" / "rules" / "style.md", "pkg style")
    session = InstructionSet(repo, load_instructions(repo))
    joined = session.on_read(repo / "pkg" / "mod.py")
    assert [(f.source, f.path.relative_to(repo).as_posix()) for f in joined] == [
        ("project", "pkg/CLAUDE.md"),
        ("rules", "pkg/.claude/rules/style.md"),
    ]


def test_unreadable_front_matter_is_reported_and_the_rule_still_applies(
    user_dir: Path, repo: Path
) -> None:
    write(repo / ".claude" / "rules" / "broken.md", "---\npaths: src/**\nBe careful.\n")
    found = load_instructions(repo)
    assert [f.path.name for f in found.files] == ["broken.md"]
    assert "Be careful." in found.prompt_text()
    assert len(found.problems) == 1 and "never closed" in found.problems[0]


@pytest.mark.parametrize("how", ["environment", "settings"])
def test_turning_claude_settings_off_leaves_out_the_users_claude_folder(
    user_dir: Path, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    write(user_dir / "CLAUDE.md", "mine")
    write(user_dir / "rules" / "tone.md", "Be brief.")
    write(repo / "CLAUDE.md", "the project's")
    write(repo / ".claude" / "rules" / "api.md", "project rule")
    if how == "environment":
        monkeypatch.setenv("PROCTOR_NO_CLAUDE_SETTINGS", "1")
    else:
        write(tmp_path / "config" / "settings.json", '{"readClaudeSettings": false}')

    settings = load_settings(repo)
    found = load_instructions(repo, user=settings.read_claude)

    assert settings.read_claude is False
    assert [f.path.name for f in found.files] == ["CLAUDE.md", "api.md"]
    assert found.files[0].source == "project"
    assert load_settings(repo, isolated=False).read_claude is False


def test_claude_settings_are_read_by_default(user_dir: Path, repo: Path) -> None:
    write(user_dir / "CLAUDE.md", "mine")
    settings = load_settings(repo)
    assert settings.read_claude is True
    assert [f.source for f in load_instructions(repo, user=settings.read_claude).files] == ["user"]


def test_brace_patterns_match_each_choice_and_a_bad_pattern_is_reported(
    user_dir: Path, repo: Path
) -> None:
    write(repo / ".claude" / "rules" / "ts.md", '---\npaths: "web/**/*.{ts,tsx}"\n---\nStrict.\n')
    write(repo / ".claude" / "rules" / "bad.md", '---\npaths: ["!"]\n---\nCareful.\n')
    start = load_instructions(repo)
    # A pattern that cannot be read: the rule is used everywhere, and the person told.
    assert [f.path.name for f in start.files] == ["bad.md"]
    assert len(start.problems) == 1 and "cannot be read" in start.problems[0]
    session = InstructionSet(repo, start)
    assert session.on_read(repo / "web" / "a.js") == []
    assert [f.path.name for f in session.on_read(repo / "web" / "ui" / "b.tsx")] == ["ts.md"]


def test_a_pattern_whose_braces_multiply_out_of_reach_is_reported_not_expanded(
    user_dir: Path, repo: Path
) -> None:
    # Forty {a,b} groups are 2**40 patterns: written out, a cloned project's rule would hang
    # proctor while it opens (project rules are read before the trust question).
    write(repo / ".claude" / "rules" / "bomb.md", f'---\npaths: "{"{a,b}" * 40}"\n---\nHi.\n')
    start = load_instructions(repo)
    assert [f.path.name for f in start.files] == ["bomb.md"]
    assert len(start.problems) == 1 and "cannot be read" in start.problems[0]
    assert "more than" in start.problems[0]
