"""What Glob and Grep share: the search root, which files are ignored, which are hidden by Read
deny rules, how paths are shown and in what order.

The two tools must agree on all of it, or a file Glob lists would be one Grep cannot find (or
the other way round), so each rule lives here once:

- The search root is the `path` input made absolute against the working directory (the
  working directory itself when it is omitted). It is also the tool's permission target.
- Ignore files follow ripgrep, which Grep runs: `.gitignore`, `.ignore` and `.rgignore`, each
  applying to its own directory and below, plus `.git/info/exclude`. Inside a git repository
  `.gitignore` files count up to the repository's root, as git counts them; outside one they
  count in every parent directory (ripgrep's `--no-require-git`). `.ignore` and `.rgignore`
  count in every parent either way. Global git excludes are not read.
- Hidden files are searched (`.github/`, `.eslintrc` are project files); version-control
  directories never are. Symbolic links are neither followed nor listed, as ripgrep does.
- Files covered by a Read deny rule never appear: the rule set is applied to every result
  path after the search, whatever the search itself skipped on the way.
- Paths are shown relative to the working directory, absolute when outside it; files are
  listed most recently modified first, ties by path, so that equal searches give equal
  answers and the file just edited comes first.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..access.context import PermissionRule, ToolPermissionContext
from ..access.paths import PathPattern, absolute, compile_pattern, is_within, pattern_covers
from ..access.targets import rule_family
from ..permissions.match import rule_base

VCS_DIRECTORIES = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")
"""Never searched or listed: their contents are a tool's database, not the project."""


# -- roots and display ------------------------------------------------------------------------


def search_root(path: str | None, cwd: Path) -> Path:
    """The directory (or file) a search starts from, absolute and with `..` folded."""
    if path is None or not path.strip():
        return absolute(cwd, cwd)
    return absolute(os.path.expanduser(path), cwd)


def display_path(path: str, cwd: Path) -> str:
    """`path` (absolute) as shown to the model: relative to `cwd` when inside it."""
    base = os.fspath(cwd)
    if path.startswith(base) and path[len(base) : len(base) + 1] == os.sep:
        return path[len(base) + 1 :]
    return path


def printable(path: str) -> str:
    """A path as text that encodes: bytes that were not UTF-8 (kept by `os.fsdecode` as lone
    surrogates, which the API cannot carry) are shown as U+FFFD."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return path


def repository_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `.git` (a directory or a file)."""
    for folder in (start, *start.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def root_problem(root: Path, given: str | None, cwd: Path, *, want_directory: bool) -> str | None:
    """Why the search cannot start at `root`, in words the model can act on, or None."""
    shown = given if given else str(root)
    try:
        st = os.stat(root)
    except FileNotFoundError:
        return (
            f"Path does not exist: {shown}. The working directory is {cwd}; give a path "
            "relative to it or an absolute path to an existing directory."
        )
    except OSError as error:
        return f"Path {shown} cannot be searched: {error.strerror or error}."
    is_dir = os.path.isdir(root)
    if want_directory and not is_dir:
        return (
            f"Path is not a directory: {shown}. Glob searches directories; to read this file, "
            "use Read."
        )
    if not is_dir and not os.path.isfile(root):
        return f"Path {shown} is neither a regular file nor a directory, so it cannot be searched."
    mode = os.R_OK | (os.X_OK if is_dir else 0)
    if not os.access(root, mode):
        return (
            f"Path {shown} cannot be searched: permission denied (mode {st.st_mode & 0o777:o}). "
            "Choose another path, or ask the user to change its permissions."
        )
    return None


def newest_first(paths: Iterable[str], base: Path) -> list[str]:
    """Paths (absolute, or relative to `base`) by modification time, newest first, ties and
    failures by path. Relative paths are looked up from an open `base`, which spares the
    kernel walking the same leading directories once per file."""
    keyed: list[tuple[int, str]] = []
    stat = os.stat
    try:
        fd: int | None = os.open(base, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        fd = None
    use_fd = fd is not None and os.stat in os.supports_dir_fd
    try:
        for path in paths:
            try:
                st = stat(path, dir_fd=fd) if use_fd else stat(os.path.join(base, path))
                mtime = st.st_mtime_ns
            except OSError:
                mtime = 0
            keyed.append((-mtime, path))
    finally:
        if fd is not None:
            os.close(fd)
    keyed.sort()
    return [path for _, path in keyed]


# -- Read deny rules --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReadDenials:
    """The Read deny rules in force, compiled once per call."""

    cwd: Path
    rules: tuple[PermissionRule, ...]
    patterns: tuple[PathPattern, ...]

    @classmethod
    def of(cls, context: ToolPermissionContext, cwd: Path) -> ReadDenials:
        rules = tuple(
            rule
            for rule in context.rules
            if rule.behavior == "deny"
            and rule.content is not None
            and rule_family(rule.tool_name) == "read"
        )
        patterns = tuple(
            compile_pattern(rule.content or "", "deny", cwd=cwd, base=rule_base(rule, cwd))
            for rule in rules
        )
        return cls(cwd, rules, patterns)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def hides(self, path: str | Path) -> bool:
        """Whether a deny rule covers this absolute path (as written or resolved)."""
        return any(pattern_covers(p, path, self.cwd, "deny") for p in self.patterns)

    def visible(self, paths: Sequence[str], base: Path | None = None) -> list[str]:
        """The paths no rule hides; relative ones are taken relative to `base` (or cwd)."""
        if not self.rules:
            return list(paths)
        folder = os.fspath(base if base is not None else self.cwd)
        return [path for path in paths if not self.hides(os.path.join(folder, path))]

    def hides_directory(self, path: str) -> bool:
        """A directory every path below which is hidden, so a walk need not enter it.

        Only a directory-wide match says so; a pattern like `*.env` covering some files below
        is for the per-file check."""
        return bool(self.rules) and self.hides(path)

    def rg_globs(self) -> list[str]:
        """Exclusion globs for ripgrep, for the rules that translate exactly.

        Only the rules matching at any depth (a relative `Read(.env)`, `Read(**/secrets/**)`)
        made of plain characters translate: ripgrep matches them against paths below the
        search root, where they can only match less than the rule does, never more. The
        per-path check stays the guarantee; these only spare reading the files."""
        globs: list[str] = []
        for rule, pattern in zip(self.rules, self.patterns, strict=True):
            content = rule.content or ""
            if pattern.roots or not _PLAIN_GLOB.issuperset(content):
                continue
            relative = content[2:] if content.startswith("./") else content
            if not relative or relative.startswith("/"):
                continue
            globs.append("!" + (relative if relative.startswith("**/") else "**/" + relative))
        return globs


_PLAIN_GLOB = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./*")


# -- ignore files -----------------------------------------------------------------------------

_Rule = tuple[bool, re.Pattern[str], bool]
_KINDS = (".rgignore", ".ignore", ".gitignore", "exclude")
"""Ripgrep's precedence: a decision from an earlier kind wins over any from a later one."""


@dataclass(frozen=True, slots=True)
class IgnoreLayer:
    """One ignore file. A path relative to the search root is matched as `lead + path[cut:]`:
    relative to the file's own directory."""

    kind: int
    lead: str
    cut: int
    rules: tuple[_Rule, ...]
    """(ignores, regex, has a directory mark) per pattern, last pattern first: the last
    pattern matching a path decides about it."""

    def decides(self, relative: str) -> bool | None:
        """True (ignored), False (re-included by `!`) or None (no pattern speaks of it).

        A pattern decides about the path itself only. pathspec's regexes also match every
        path below a matching directory (its `ps_d` group); those matches are skipped, as
        ripgrep skips them: a walk never enters an ignored directory anyway, and one searched
        by name (an ignored directory as the root) is searched, as ripgrep searches it."""
        path = self.lead + relative[self.cut :]
        size = len(path)
        for ignores, regex, marked in self.rules:
            found = regex.match(path)
            if found is not None and (
                found.end() == size or not marked or found.group(_DIR_MARK) is None
            ):
                return ignores
        return None


_DIR_MARK = "ps_d"


def read_ignore_file(path: str) -> tuple[_Rule, ...]:
    import pathspec  # here, not at the top: a headless start imports this module, needs none

    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            lines = file.read().splitlines()
    except OSError:
        return ()
    rules: list[_Rule] = []
    for pattern in pathspec.GitIgnoreSpec.from_lines(lines).patterns:
        regex: Any = getattr(pattern, "regex", None)
        if pattern.include is None or not isinstance(regex, re.Pattern):
            continue
        rules.append((pattern.include, regex, _DIR_MARK in regex.groupindex))
    return tuple(reversed(rules))


def layers_in(directory: str, relative: str) -> list[IgnoreLayer]:
    """The ignore files of one directory below the search root (`relative` to the root)."""
    return _layers(directory, "", len(relative) + 1, is_repo_root=False)


def parent_layers(root: Path, repository: Path | None) -> list[IgnoreLayer]:
    """The ignore files above the search root (and the root's own), outermost first."""
    found: list[IgnoreLayer] = []
    chain = [root, *root.parents]
    for folder in reversed(chain):
        lead = os.path.relpath(root, folder).replace(os.sep, "/")
        lead = "" if lead == "." else lead + "/"
        gitignore = repository is None or is_within(folder, repository)
        found.extend(
            _layers(
                os.fspath(folder),
                lead,
                0,
                is_repo_root=folder == repository,
                gitignore=gitignore,
            )
        )
    return found


def _layers(
    directory: str,
    lead: str,
    cut: int,
    is_repo_root: bool,
    gitignore: bool = True,
) -> list[IgnoreLayer]:
    found: list[IgnoreLayer] = []
    for kind, name in enumerate(_KINDS):
        if name == "exclude":
            if not is_repo_root:
                continue
            file = os.path.join(directory, ".git", "info", "exclude")
        elif name == ".gitignore" and not gitignore:
            continue
        else:
            file = os.path.join(directory, name)
        if not os.path.isfile(file):
            continue
        rules = read_ignore_file(file)
        if rules:
            found.append(IgnoreLayer(kind, lead, cut, rules))
    return found


def is_ignored(layers: Sequence[IgnoreLayer], relative: str, is_dir: bool) -> bool:
    """Whether ignore files exclude `relative` (to the search root). For each kind the
    deepest file with an opinion decides; the first kind with a decision wins."""
    if not layers:
        return False
    name = relative + "/" if is_dir else relative
    for kind in range(len(_KINDS)):
        for layer in reversed(layers):
            if layer.kind != kind:
                continue
            decided = layer.decides(name)
            if decided is not None:
                return decided
    return False
