"""What an instruction file's text becomes before the model sees it, and `.claude/rules`.

Two things the seeds' system does with these files that people now rely on:

- **HTML comments are notes for people.** `<!-- ... -->` outside code (a fenced block, an
  inline span) is taken out before the text reaches the model, so maintainers can leave
  notes in a CLAUDE.md without spending the model's attention on them; an `@import` inside
  a comment is not followed either. A comment opened and never closed is left as written:
  cutting the rest of the file would lose instructions over one typo.
- **`.claude/rules/**/*.md`** are instructions split into topic files, read after the
  directory's CLAUDE.md files (in path order, subfolders included). A rule whose front matter
  has `paths:` (glob patterns, relative to the directory holding `.claude`) applies only to
  those files: it reaches the model, as a reminder, the first time the agent reads one of
  them, as subdirectories' CLAUDE.md files do. A rule without `paths:` applies everywhere.

Plain functions over text and paths, so instructions.py stays about which files and in what
order.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

import pathspec

from ..tools.skill_files import SkillFileError, split_front_matter

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INDENTED = re.compile(r"^(?: {4}|\t)")
_CODE_OR_COMMENT = re.compile(r"(`+)[^`]*?\1|<!--.*?-->", re.DOTALL)


def strip_html_comments(text: str) -> str:
    """`text` without its HTML comments outside code; a line that held only a comment goes
    with it, so no gap is left where a note was."""
    if "<!--" not in text:
        return text
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    indented = False  # inside an indented code block (four spaces after a blank line)
    for line in text.splitlines(keepends=True):
        opened = _FENCE.match(line)
        marker = opened.group(1) if opened is not None else None
        if fence is None and marker is None:
            after_blank = not prose or not prose[-1].strip() or indented
            indented = bool(line.strip()) and _INDENTED.match(line) is not None and after_blank
            if indented:  # an example, kept as written; what came before is prose
                out.append(_without_comments("".join(prose)))
                prose = []
                out.append(line)
            else:
                prose.append(line)
            continue
        if fence is None:
            out.append(_without_comments("".join(prose)))
            prose = []
            fence = marker
        elif marker is not None and marker[0] == fence[0] and len(marker) >= len(fence):
            fence = None
        out.append(line)
    out.append(_without_comments("".join(prose)))
    return "".join(out)


def _without_comments(prose: str) -> str:
    if "<!--" not in prose:
        return prose

    def replace(match: re.Match[str]) -> str:
        said = match.group(0)
        return said if said.startswith("`") else "\0"

    marked = _CODE_OR_COMMENT.sub(replace, prose)
    lines = marked.splitlines(keepends=True)
    kept = [line for line in lines if not (("\0" in line) and not line.replace("\0", "").strip())]
    return "".join(kept).replace("\0", "")


def rule_files(rules: Path) -> list[Path]:
    """Every `.md` under the folder `rules`, in path order; none when it is absent."""
    try:
        if not rules.is_dir():
            return []
        found = [path for path in rules.rglob("*.md") if not path.is_dir()]
    except OSError:
        return []
    return sorted(found, key=lambda path: path.relative_to(rules).as_posix())


def rule_scope(text: str, path: Path) -> tuple[tuple[str, ...], str, str | None]:
    """A rule's `paths:` patterns (none: it applies everywhere), its text without the front
    matter, and a problem to report (front matter that cannot be read: the rule then applies
    everywhere, as written, rather than being lost)."""
    try:
        meta, _, body = split_front_matter(text, path)
    except SkillFileError as error:
        return (), text, f"{path}: {error}; the rule is used as it is, for every file"
    paths = meta.get("paths")
    if paths is None or paths == "":
        return (), body, None
    patterns = [paths] if isinstance(paths, str) else paths
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        return (), body, f"{path}: `paths` must be a pattern or a list of them; used everywhere"
    scope = tuple(p.strip() for p in patterns if p.strip())
    try:
        _spec(scope)
    except ValueError as error:  # pathspec's pattern errors are ValueErrors
        return (
            (),
            body,
            f"{path}: `paths` has a pattern that cannot be read ({error}); used everywhere",
        )
    return scope, body, None


@functools.lru_cache(maxsize=128)
def _spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """The patterns as gitignore lines, `{a,b}` written out (people write `*.{ts,tsx}`)."""
    return pathspec.GitIgnoreSpec.from_lines([e for p in patterns for e in _braces(p)])


_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")
MAX_BRACE_CHOICES = 256
"""Patterns one `paths:` entry may write out to. Groups multiply (`{a,b}` forty times is
2**40), and a cloned project's rule is read before the trust question: past this the
pattern is reported as unreadable instead of hanging proctor while it opens."""


def _braces(pattern: str) -> list[str]:
    """`src/*.{ts,tsx}` -> `src/*.ts`, `src/*.tsx` (each group in turn, not nested)."""
    written = [pattern]
    while (match := _BRACES.search(written[0])) is not None:
        choices = match.group(1).split(",")
        if len(written) * len(choices) > MAX_BRACE_CHOICES:
            raise ValueError(f"{pattern!r} writes out to more than {MAX_BRACE_CHOICES} patterns")
        written = [
            p[: m.start()] + choice + p[m.end() :]
            for p in written
            if (m := _BRACES.search(p)) is not None
            for choice in choices
        ]
    return written


def rule_applies(patterns: Iterable[str], base: Path, path: Path) -> bool:
    """Whether a rule scoped to `patterns` (relative to `base`) covers the file at `path`."""
    try:
        relative = PurePosixPath(path.relative_to(base).as_posix())
    except ValueError:
        return False
    return _spec(tuple(patterns)).match_file(str(relative))
