"""Which paths a command names, so the caller can check each is inside the working dirs.

Answering needs to tell operands from flag arguments (`head -n 5 f`, `grep PAT f`,
`find . -name PAT`, `cp -t DIR f`), which is what the flag tables already know. Anything
not understood returns None, never a partial list: a missed path would be a path nobody
checked. Redirection targets (including input, `< /etc/shadow`) are paths too.
"""

from __future__ import annotations

import os

from core.bash.commands import READ_ONLY, WRITERS
from core.bash.flags import Spec, scan
from core.bash.git import REMOTE_ACTIONS, STASH_ACTIONS, SUBCOMMANDS, split_global
from core.bash.parse import SimpleCommand
from core.bash.readonly import AWK, SED, VERSION_ONLY, find_scan, table_for_anything
from core.bash.wrappers import WRAPPERS, assignment_name, base_name, unwrap_once

_NOT_FILES = frozenset({"<<", "<<-", "<<<"})


def _redirect_paths(cmd: SimpleCommand) -> list[str] | None:
    paths: list[str] = []
    for redirect in cmd.redirects:
        if redirect.operator in _NOT_FILES:
            continue
        if redirect.target is None:
            return None
        if redirect.writes or redirect.operator.endswith("<"):
            paths.append(redirect.target)
    return paths


def _operands(args: tuple[str, ...], table: Spec) -> list[str] | None:
    found = scan(args, table)
    if found.unknown:
        return None
    operands = found.operands
    if table.pattern_first and not found.has(*table.pattern_first):
        operands = operands[1:]
    return found.paths + (operands if table.operands_are_paths else [])


def _script_operands(
    args: tuple[str, ...], table: Spec, inline: tuple[str, ...], *, assignments: bool = False
) -> list[str] | None:
    """The file operands after the script. Only awk reads `name=value` operands as variable
    assignments; to sed (and the kernel) `a=/../.env` is a path."""
    found = scan(args, table)
    if found.unknown:
        return None
    operands = found.operands
    if not found.has(*inline) and not found.paths:
        operands = operands[1:]  # the script itself
    return found.paths + [w for w in operands if not (assignments and assignment_name(w))]


def _git(args: tuple[str, ...]) -> list[str] | None:
    problem, sub, rest, paths = split_global(args)
    if problem:
        return None
    if sub is None:
        return paths
    if sub in ("remote", "stash", "worktree"):
        actions = REMOTE_ACTIONS if sub == "remote" else STASH_ACTIONS
        if not rest or all(word.startswith("-") for word in rest):
            return paths
        if rest[0] not in actions:
            return None
        table: Spec | None = actions[rest[0]]
        rest = rest[1:]
    else:
        table = SUBCOMMANDS.get(sub)
    if table is None:
        return None
    found = _operands(rest, table)
    return None if found is None else paths + found


# Options that take the names of the files to read from another file (or `-`, the input).
_NAMES_FROM = ("--files0-from", "-files0-from", "--files-from", "--from-file", "-T")


def argv_paths(argv: tuple[str, ...]) -> list[str] | None:
    if not argv:
        return None
    name = base_name(argv[0])
    args = argv[1:]
    if any(word.startswith(_NAMES_FROM) for word in args) or (name == "file" and "-f" in args):
        return None  # it reads the names of the files it opens from a file or its input
    if name == "find":
        problem, paths = find_scan(args)
        return None if problem.startswith(("ends", "uses -")) and "known" in problem else paths
    if name == "git":
        return _git(args)
    if name == "sed":
        return _script_operands(args, SED, ("-e", "--expression"))
    if name in ("awk", "gawk", "mawk"):
        return _script_operands(args, AWK, ("-e", "--source"), assignments=True)
    if (name in VERSION_ONLY and args in (("--version",), ("--help",))) or (
        name == "go" and args == ("version",)
    ):
        return []
    if name in ("[", "[[", "test"):
        return []  # a test looks at metadata at most: names, not contents
    if table_for_anything(name):
        return []  # prints its words or reports on the system: no file is named
    if name == "env" and all(word.startswith("-") for word in args):
        return []  # prints the environment
    if name == "cd" and "-" in args:
        return None  # OLDPWD: not known here
    if name == "command" and args[:1] in (("-v",), ("-V",)):
        return []  # prints where a command is found
    table = READ_ONLY.get(name) or WRITERS.get(name)
    if table is None or (table.check and table.check not in _TABLE_CHECKS):
        return None
    return _operands(args, table)


# Checks that only refuse more than the flag table does: the table still says which words
# are paths.
_TABLE_CHECKS = frozenset({"anything", "date", "printf", "man", "test", "cd", "tree", "jq"})


def touched_paths(cmd: SimpleCommand) -> tuple[str, ...] | None:
    """Path operands (as written, after quote removal), or None when they cannot be told apart."""
    if cmd.argv is None:
        return None
    redirects = _redirect_paths(cmd)
    if redirects is None:
        return None
    if not cmd.argv:
        return tuple(redirects)
    # xargs adds operands read from its input: nobody can say which paths those are.
    current: tuple[str, ...] | None = cmd.argv
    directory = ""
    own: list[str] = []  # paths the wrappers name themselves (`time -o FILE`, `env -C DIR`)
    while current is not None:
        if base_name(current[0]) == "xargs":
            return None
        table = WRAPPERS.get(base_name(current[0]))
        if table is not None:
            own += scan(current[1:], table).paths
        moved = chdir_of(current)
        if moved:
            # `env -C /etc cat shadow` reads /etc/shadow: relative operands from then on
            # are relative to the new directory.
            directory = os.path.join(directory, moved) if directory else moved
        argv, current = current, unwrap_once(current)
    paths = argv_paths(argv)
    if paths is None:
        return None
    if directory:
        paths = [os.path.join(directory, path) for path in paths]
    return tuple(own + paths + redirects)


# find's actions that write the file named by the next word.
_FIND_WRITES = frozenset({"-fls", "-fprint", "-fprint0", "-fprintf"})


def option_writes(cmd: SimpleCommand) -> tuple[str | None, ...]:
    """Files a command writes through its own words rather than a redirection: `sort -o F`,
    `git diff --output=F`, `time -o F cmd`, `find . -fprint F`, `uniq IN OUT`. The chain judges
    each as a write, exactly like `> F`, so a person's `Bash(sort:*)` allows sorting, not
    writing /etc/x. None stands for a write whose file cannot be named here (a flag the
    table does not know stopped the scan before a writing flag could be seen, an optional
    file left out): a write nobody can check, which asks."""
    if not cmd.argv:
        return ()
    written: list[str | None] = []
    current: tuple[str, ...] | None = cmd.argv
    argv = cmd.argv
    directory = ""  # `env -C DIR sort -o F` writes DIR/F
    while current is not None:
        argv = current
        name = base_name(current[0])
        table = WRAPPERS.get(name)
        if table is not None:
            found = scan(current[1:], table)
            written += [_within(directory, path) for path in found.written]
            moved = chdir_of(current)
            if moved:
                directory = os.path.join(directory, moved) if directory else moved
            if name == "xargs":  # runs the rest with more operands added at the end
                current = tuple(found.operands + found.rest) or None
                continue
        current = unwrap_once(current)
    return tuple(written + [_within(directory, path) for path in _program_writes(argv)])


def _within(directory: str, path: str | None) -> str | None:
    return os.path.join(directory, path) if directory and path is not None else path


def _program_writes(argv: tuple[str, ...]) -> list[str | None]:
    name = base_name(argv[0])
    args = rest = argv[1:]
    if name == "find":
        return [
            args[i + 1] if i + 1 < len(args) else None
            for i, word in enumerate(args)
            if word in _FIND_WRITES
        ]
    if name == "git":
        problem, sub, rest, _ = split_global(args)
        if problem or sub is None:
            return []  # refused or asked for its own reasons; no subcommand writes here
        table: Spec | None = SUBCOMMANDS.get(sub)
    elif name == "sed":
        table = SED
    elif name in ("awk", "gawk", "mawk"):
        table = AWK
    else:
        table = READ_ONLY.get(name) or WRITERS.get(name)
    if table is None:
        return []
    found = scan(rest, table)
    written = list(found.written)
    if found.unknown and any(flag.writes for flag in table.flags.values()):
        written.append(None)  # `sort --out=/x`: an abbreviation, or a flag we do not know
    if name == "uniq" and len(found.operands) > 1:
        written.append(found.operands[1])  # uniq IN OUT writes OUT
    if (name == "tree" and found.has("-R") and found.has("-H")) or (
        name == "file" and found.has("-C", "--compile")
    ):
        written.append(None)  # an index in every directory; compiled magic beside its source
    return written


_CHDIR = {"env": ("-C", "--chdir"), "sudo": ("-D", "--chdir")}


def chdir_of(argv: tuple[str, ...]) -> str | None:
    """The directory a wrapper runs its command in (`env -C DIR`, `sudo -D DIR`), if any."""
    name = base_name(argv[0])
    flags = _CHDIR.get(name)
    if flags is None:
        return None
    found = scan(argv[1:], WRAPPERS[name])
    for flag, value in found.options:
        if flag in flags and value:
            return value
    return None
