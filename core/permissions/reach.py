"""What a command reads beyond the paths it names: recursion, symlinks, git's objects.

`grep -r KEY .` names `.` and reads `.env`; `grep -R` and `find -L` follow a symlink out of
the project; `git show HEAD:.env` reads `.env` from the repository without opening it. The
decision chain judges such commands by what they can reach:

- a recursive read of a tree that a `Read` deny rule may cover part of is not certainly
  allowed: it asks (the rule may cover what it reads, and the chain cannot tell);
- a read that follows symlinks is outside the project if a symlink below its operands
  points outside (found by walking, bounded: a tree too big to walk counts as outside);
- `REV:path` operands of git's readers are reads of that path;
- a git command printing content out of history (`git log -p`, `git show`) may print any
  path the repository holds or held, which git_history.py lists.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..bash import SimpleCommand, unwrap
from ..bash.git import split_global
from ..bash.wrappers import base_name

WALK_LIMIT = 20_000

# Programs that always descend into directories given to them (or into `.` when given none).
_ALWAYS_RECURSIVE = frozenset({"rg", "ag", "ack", "find", "du", "tree"})
_DEFAULT_DOT = frozenset({"rg", "ag", "ack", "find", "du", "tree", "ls"})
_GREPS = frozenset({"grep", "egrep", "fgrep"})
_CONTENT_READERS = frozenset({"rg", "ag", "ack"})
# git commands that read (and print or pack) the content of every tracked file.
_GIT_WHOLE_TREE_READERS = frozenset({"grep", "archive", "bundle", "fast-export"})


@dataclass(frozen=True, slots=True)
class Reach:
    """What one simple command reads beyond its named paths."""

    trees: tuple[str, ...] = ()
    """Directories it reads recursively (as written)."""
    reads_content: bool = False
    """Whether it reads the files in them (grep, rg) or only their names (find, du)."""
    follows_symlinks: bool = False
    object_paths: tuple[str, ...] = ()
    """Paths it reads out of git's objects (`HEAD:.env`)."""
    tracked_files: bool = False
    """It reads every tracked file's content (`git grep`)."""
    history: bool = False
    """It prints file content out of git's history or index (`git log -p`, `git show`),
    from any path the repository holds or held (core/permissions/git_history.py)."""
    pathspec: tuple[str, ...] | None = None
    """For `history`: the paths after `--` it is limited to; None when not limited."""
    repository: tuple[str, ...] = ()
    """For `history`: where git was pointed with `-C` (as written); () for where it runs."""


def reach_of(command: SimpleCommand, operands: tuple[str, ...]) -> Reach:
    argv = unwrap(command.argv) if command.argv else ()
    if not argv:
        return Reach()
    name = base_name(argv[0])
    args = argv[1:]
    flags = [word for word in args if word.startswith("-") and word != "-"]
    if name == "git":
        return _git(args)
    if name in ("tar", "bsdtar", "zip", "7z"):
        return _archiver(name, args)
    recursive = (
        name in _ALWAYS_RECURSIVE
        or (name in _GREPS and _has(flags, "r", "R", "--recursive", "--dereference-recursive"))
        or (name in _GREPS and _directories_recurse(args))
        or (name in ("diff", "colordiff") and _has(flags, "r", "--recursive"))
        or (name == "cp" and _has(flags, "r", "R", "a", "--recursive", "--archive"))
        or (name == "ls" and _has(flags, "R", "--recursive"))
    )
    if not recursive:
        return Reach()
    follows = (
        (name in _GREPS and _has(flags, "R", "--dereference-recursive"))
        or (name == "rg" and _has(flags, "L", "--follow"))
        or (name == "find" and ("-L" in args or "-follow" in args or "-H" in args))
        or (name in ("du", "ls") and _has(flags, "L", "--dereference"))
        or (name == "tree" and "-l" in flags)
        or name in ("diff", "colordiff")  # diff -r follows symlinks it meets
        or (name == "cp" and _has(flags, "L", "--dereference"))
    )
    trees = operands or ((".",) if name in _DEFAULT_DOT or name in _GREPS else ())
    content = name in _GREPS or name in _CONTENT_READERS or name in ("diff", "colordiff", "cp")
    return Reach(trees=tuple(trees), reads_content=content, follows_symlinks=follows)


# git commands that print file content from objects: whole diffs, blobs by name or hash.
_GIT_HISTORY_PRINTERS = frozenset(
    {"show", "diff", "diff-tree", "diff-index", "diff-files", "format-patch", "range-diff",
     "cat-file", "stash"}
)  # fmt: skip
# log's flags that print file content (patches) or search it (pickaxe).
_LOG_CONTENT_FLAGS = frozenset(
    {"-p", "-u", "--patch", "-c", "--cc", "-m", "--full-diff", "-W", "--function-context",
     "--binary", "--word-diff", "--color-words", "--textconv", "--ext-diff", "--patch-with-stat",
     "--patch-with-raw", "--remerge-diff", "--diff-merges", "--check"}
)  # fmt: skip
_LOG_CONTENT_PREFIXES = ("-S", "-G", "-L", "-U", "--unified", "--word-diff", "--color-words",
                         "--pickaxe", "--diff-merges", "--find-object")  # fmt: skip


def _config_files(rest: tuple[str, ...]) -> tuple[str, ...]:
    """The configuration files `git config` reads: its scope's, or every scope's."""
    home = os.path.expanduser("~")
    scopes = {
        "--global": (f"{home}/.gitconfig", f"{home}/.config/git/config"),
        "--system": ("/etc/gitconfig",),
        "--local": (".git/config",),
        "--worktree": (".git/config.worktree",),
    }
    chosen = [files for flag, files in scopes.items() if flag in rest]
    if "--includes" in rest:
        return ("/",)  # include.path can name any file
    if chosen:
        return tuple(path for files in chosen for path in files)
    return tuple(path for files in scopes.values() for path in files)


def _prints_history(sub: str, rest: tuple[str, ...]) -> bool:
    if sub in _GIT_HISTORY_PRINTERS:
        return True
    if sub in ("log", "whatchanged", "reflog", "shortlog"):
        flags = [word for word in rest if word.startswith("-")]
        return sub == "whatchanged" or any(
            flag in _LOG_CONTENT_FLAGS or flag.startswith(_LOG_CONTENT_PREFIXES) for flag in flags
        )
    return False


def _archiver(name: str, args: tuple[str, ...]) -> Reach:
    """An archiver that creates an archive reads its operands whole; with `-C`, a file list
    (`-T`) or an `@archive`, what it reads is not known from the words, so it may be anything."""
    words = [word for word in args if word != "-"]
    creates = name in ("zip", "7z") or tar_does(tuple(words), "c", ("--create",))
    if not creates:
        return Reach()
    unclear = any(
        word.startswith(("-C", "--directory", "-T", "--files-from", "@", "-i")) for word in words
    )
    operands = tuple(word for word in words[1:] if not word.startswith("-"))
    trees = ("/",) if unclear or not operands else operands
    return Reach(trees=trees, reads_content=True)


def tar_does(args: tuple[str, ...], letter: str, long_names: tuple[str, ...]) -> bool:
    """Whether tar's words ask for the mode `letter` (`c` create, `x` extract): as a long
    option, in a cluster of short ones anywhere, or in the old-style first word (`tar xf`)."""
    return any(
        word in long_names
        or (index == 0 and not word.startswith("-") and letter in word)
        or (word.startswith("-") and not word.startswith("--") and letter in word[1:])
        for index, word in enumerate(args)
    )


def _directories_recurse(args: tuple[str, ...]) -> bool:
    """grep's `-d recurse`, `-drecurse`, `--directories=recurse` or `--directories recurse`."""
    for index, word in enumerate(args):
        if word in ("-drecurse", "--directories=recurse"):
            return True
        if word in ("-d", "--directories") and args[index + 1 : index + 2] == ("recurse",):
            return True
    return False


def _has(flags: list[str], *wanted: str) -> bool:
    """A short flag (`R`, also inside `-Rn`) or a long one (`--recursive`) is given."""
    for flag in flags:
        if flag.startswith("--"):
            if flag.split("=", 1)[0] in wanted:
                return True
        elif any(len(w) == 1 and w in flag[1:] for w in wanted):
            return True
    return False


def _git(args: tuple[str, ...]) -> Reach:
    problem, sub, rest, chdirs = split_global(args)
    if problem or sub is None:
        return Reach()
    if sub == "diff" and "--no-index" in rest:
        # Two paths outside git's view, directories compared whole like diff -r.
        operands = tuple(w for w in rest if not w.startswith("-"))
        return Reach(trees=operands, reads_content=True)
    if _prints_history(sub, rest):
        pathspec = tuple(rest[rest.index("--") + 1 :]) if "--" in rest else None
        objects = tuple(
            word.split(":", 1)[1]
            for word in rest
            if ":" in word and not word.startswith("-") and word.split(":", 1)[1]
        )
        return Reach(
            object_paths=objects, history=True, pathspec=pathspec, repository=tuple(chdirs[-1:])
        )
    if sub == "grep" and any(w in ("--untracked", "--no-index") for w in rest):
        return Reach(trees=(".",), reads_content=True)  # the work tree, like grep -r
    if sub in _GIT_WHOLE_TREE_READERS:
        return Reach(tracked_files=True, repository=tuple(chdirs[-1:]))
    if sub == "config":
        blobs = [
            value.split(":", 1)[1]
            for flag, value in itertools.pairwise(rest)
            if flag == "--blob" and ":" in value
        ]
        blobs += [w.split(":", 1)[1] for w in rest if w.startswith("--blob=") and ":" in w]
        return Reach(
            object_paths=tuple(blobs),
            repository=tuple(chdirs[-1:]),
            trees=_config_files(rest),
            reads_content=True,
        )
    return Reach()


def symlink_out(tree: Path, inside: Callable[[Path], bool]) -> str | None:
    """The first symlink below `tree` that leads outside (`inside(path)` false), or a note
    that the tree is too big to tell; None when every symlink stays inside."""
    for count, path in enumerate(_walk(tree)):
        if count >= WALK_LIMIT:
            return f"{tree} (too many files to check where its symlinks lead)"
        if os.path.islink(path) and not inside(path):
            return str(path)
    return None


def tree_holds(tree: Path, wanted: Callable[[Path], bool]) -> bool:
    """Whether anything below `tree` is `wanted` (a directory too big to walk may hold it)."""
    if not tree.is_dir() or tree.is_symlink():
        return False
    return any(count >= WALK_LIMIT or wanted(path) for count, path in enumerate(_walk(tree)))


_XARGS_SPLITS = frozenset(" \t\n'\"\\")


def names_split_whole(tree: Path) -> bool:
    """Whether xargs (without -0) would pass every name below `tree` as one word: it splits
    at blanks and newlines and reads quotes and backslashes, so a file called
    `q /etc/shadow` would hand it `/etc/shadow`. A tree too big to walk does not count."""
    for count, path in enumerate(_walk(tree)):
        if count >= WALK_LIMIT or _XARGS_SPLITS.intersection(path.name):
            return False
    return not _XARGS_SPLITS.intersection(tree.name)


def _walk(tree: Path) -> Iterator[Path]:
    pending = [os.fspath(tree)]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as scan:
                for entry in scan:
                    yield Path(entry.path)
                    try:
                        if entry.is_dir(follow_symlinks=False) and entry.name != ".git":
                            pending.append(entry.path)
                    except OSError:
                        continue
        except OSError:
            continue
