"""What a shell command reaches, for path rules and for the working directories.

A command reaches more than its operands: what its redirections open, what it reads whole
(`grep -r`, `cp -r`), what it reads out of git's objects or history, what a program it hands
a script to may open, and what it removes with everything below. The decision chain
(decide.py) asks three questions here: does a Read or Edit rule cover something the command
reaches (`shell_paths_hit`), what is the first thing it reaches outside the working
directories (`first_outside`), and would it remove a critical path (`critical_removal`).
Where the answer cannot be told, the answer says so, and the chain asks.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

from ..access.context import PermissionRule, RuleBehavior
from ..access.paths import PROTECTED_NAMES, absolute, compile_pattern, is_critical, is_within
from ..access.targets import DomainTarget, PathAccess, PathTarget, rule_family
from ..bash import SimpleCommand, touched_paths, unwrap
from ..bash.commands import READ_ONLY
from ..bash.flags import scan
from ..bash.git import split_global
from ..bash.paths import argv_paths
from ..bash.readonly import command_problem
from ..bash.wrappers import WRAPPERS, base_name, unwrap_once
from .call import MAX_SCRIPT_DEPTH, Call, expand_home, program_of
from .git_history import known_paths, repository_of
from .globs import is_glob
from .match import command_runs, rule_base, target_matches, word_tokens
from .reach import Reach, names_split_whole, reach_of, symlink_out, tar_does, tree_holds

REMOVAL_COMMANDS = frozenset({"rm", "rmdir", "unlink", "shred", "mv"})


def shell_paths_hit(
    call: Call, rules: tuple[PermissionRule, ...], behavior: RuleBehavior
) -> tuple[PermissionRule, bool] | None:
    """Path rules apply to what a command touches: `cat .env` is a read of .env, `> out` an
    edit of out. A redirection whose target is not known may be anything."""
    path_rules = [r for r in rules if r.content is not None and rule_family(r.tool_name)]
    if not path_rules:
        return None
    assert call.analysis is not None
    seen: list[tuple[PathAccess, str]] = []
    mentioned: tuple[PermissionRule, bool] | None = None  # a may-hit, after any sure one
    read_rules = [r for r in path_rules if rule_family(r.tool_name) == "read"]
    if call.shell_problem or not call.analysis.ok:
        return path_rules[0], False  # not read as bash will run it: it may touch anything
    for index, command in enumerate(call.analysis.commands):
        paths = call.command_paths(index, for_write=False)
        unknown_redirect = any(
            r.target is None and not r.operator.startswith("<<") for r in command.redirects
        )
        if paths is None and (command.wild or command.argv is None or unknown_redirect):
            # A glob, or words known only when bash runs (`cat {.env,x}`, `cat $f`, `< .en?`):
            # they may name anything.
            return path_rules[0], False
        if paths is None and command.argv and os.path.basename(command.argv[0]) == "xargs":
            fed = fed_by_find(call, index)
            if fed is None:
                return path_rules[0], False  # xargs reads names from anywhere
            roots, own = fed
            for rule in read_rules:
                if any(may_cover_below(rule, call, tree) for tree in roots):
                    return rule, False
            paths = tuple(place for path in own for place in call.places(path, index))
        if paths is None and program_of(command) in READ_ONLY:
            return path_rules[0], False  # a reader whose files are not known (names from -)
        for path in paths or ():
            seen += [("read", path), ("edit", path)]
        for redirect in command.redirects:
            # What a redirection opens, whatever the program (`npm test < .env`).
            opened = redirect.target or ""
            duplicate = redirect.operator.endswith("&") and opened.isdigit()
            if opened and not redirect.operator.startswith("<<") and not duplicate:
                access: PathAccess = "edit" if redirect.writes else "read"
                seen += [(access, p) for p in call.places(opened, index)]
        if writes_unknown_files(command):
            edit_rules = [r for r in path_rules if rule_family(r.tool_name) == "edit"]
            if edit_rules and not mentioned:
                mentioned = (edit_rules[0], False)  # it writes files nobody can name here
        removed = removed_paths(call, index)
        if removed is UNKNOWN_PATHS:
            return path_rules[0], False
        for tree in removed or ():
            # Removing a directory edits everything below it.
            where = absolute(expand_home(tree), call.cwd)
            for rule in path_rules:
                if rule_family(rule.tool_name) == "edit" and _covers_below(rule, call, where):
                    return rule, True
        mentioned = mentioned or _mentioned_path_hit(call, index, path_rules, behavior)
        reach = reach_of(command, paths or ())
        seen += [("read", path) for path in _object_places(call, index, reach)]
        history = reach.history or reach.tracked_files  # what git holds, not the tree
        if history and (found := _history_hit(call, index, reach, read_rules, behavior)):
            return found
        trees = reach.trees if reach.reads_content else ()
        trees = tuple(place for tree in trees for place in call.places(tree, index))
        for rule in read_rules:
            if not mentioned and any(may_cover_below(rule, call, tree) for tree in trees):
                mentioned = (rule, False)  # it may read what the rule covers, or may not
    for written in call.writes():
        if written is None:
            return path_rules[0], False
        seen.append(("edit", written))
    for access, path in seen:
        target = PathTarget(
            absolute(expand_home(path), call.cwd), "edit" if access == "edit" else "read"
        )
        for rule in path_rules:
            if rule_family(rule.tool_name) == target.access and target_matches(
                rule, target, call.cwd, behavior
            ):
                return rule, True
    return mentioned


def _object_places(call: Call, part: int, reach: Reach) -> list[str]:
    """Where `REV:path` operands are: from the repository's top (`HEAD:path`), or from where
    git runs for `HEAD:./path`."""
    places: list[str] = []
    where = [p for d in reach.repository for p in call.places(d, part)] or call.places(".", part)
    for path in reach.object_paths:
        if path.startswith(("./", "../")) or path in (".", ".."):
            places += [os.path.join(directory, path) for directory in where]
            continue
        for directory in where:
            repository = repository_of(Path(directory))
            places.append(os.path.join(repository.top if repository else directory, path))
    return places


def _history_hit(
    call: Call, part: int, reach: Reach, rules: list[PermissionRule], behavior: RuleBehavior
) -> tuple[PermissionRule, bool] | None:
    """A git command printing content out of history (or every tracked file, `git grep`)
    may print any path the repository holds or held, within its pathspec: a Read rule
    covering one of those may cover it."""
    if not rules:
        return None
    where = [p for d in reach.repository for p in call.places(d, part)]
    limits = [
        absolute(place, call.cwd)
        for spec in reach.pathspec or ()
        for place in call.places(spec, part)
    ]
    for directory in where or call.places(".", part):
        if reach.tracked_files and repository_of(Path(directory)) is None:
            # Outside a repository, `git grep` may search the directory itself, as grep -r
            # does (`grep.fallbackToNoIndex`).
            for rule in rules:
                if may_cover_below(rule, call, directory):
                    return rule, False
            continue
        known = known_paths(Path(directory))
        if known is None:
            return rules[0], False
        for path in known:
            if limits and not any(is_within(path, limit) for limit in limits):
                continue
            target = PathTarget(path, "read")
            for rule in rules:
                if target_matches(rule, target, call.cwd, behavior):
                    return rule, False
    return None


def _covers_below(rule: PermissionRule, call: Call, tree: Path) -> bool:
    """Whether an Edit rule covers anything below `tree` (deny and ask rules only)."""

    def covered(path: Path) -> bool:
        return target_matches(rule, PathTarget(path, "edit"), call.cwd, "deny")

    return tree_holds(tree, covered)


def _mentioned_path_hit(
    call: Call, part: int, path_rules: list[PermissionRule], behavior: RuleBehavior
) -> tuple[PermissionRule, bool] | None:
    """A command that is not known to treat its words as data may open any path it mentions
    (`bash -c 'cat .env'`, `python3 -c 'open(".env")'`), or any at all when it runs a script
    from its input: such a path under a rule is a path the rule may cover."""
    assert call.analysis is not None
    command = call.analysis.commands[part]
    runs = command_runs(call.analysis, command)
    if runs.unseen:
        return path_rules[0], False
    if not runs.commands and (call.analysis.read_only or not command_problem(command)):
        return None
    for token in word_tokens((command.argv or ())[1:]):
        if token.startswith("-"):
            continue
        for place in call.places(token, part):
            where = absolute(place, call.cwd)
            for rule in path_rules:
                family = rule_family(rule.tool_name)
                if family and target_matches(rule, PathTarget(where, family), call.cwd, behavior):
                    return rule, False
    return None


def may_cover_below(rule: PermissionRule, call: Call, tree: str) -> bool:
    """Whether a path rule may cover something below `tree` (a directory read whole)."""
    assert rule.content is not None
    base = absolute(expand_home(tree), call.cwd)
    pattern = compile_pattern(rule.content, "deny", cwd=call.cwd, base=rule_base(rule, call.cwd))
    if not pattern.roots:
        return True  # `.env` anywhere
    for root in pattern.roots:
        start = root.joinpath(*pattern.literal_parts())
        if is_within(start, base) or is_within(base, start):
            return True
    return False


def first_outside(call: Call) -> str | None:
    """The first thing a read-only call reaches outside the working directories, if any."""
    target = call.target
    if isinstance(target, PathTarget):
        return None if call.inside(target.path) else str(target.path)
    if isinstance(target, DomainTarget):
        return target.host
    if call.analysis is not None:
        if call.shell_problem:
            return f"where it runs ({call.shell_problem})"
        for directory in call.shell.every() if call.shell else ():
            if not call.inside(directory):
                return f"{directory} (where it runs)"
        for index, command in enumerate(call.analysis.commands):
            paths = call.command_paths(index, for_write=False)
            if paths is None and (fed := fed_by_find(call, index)) is not None:
                roots = tuple(p for x in fed[0] for p in call.places(x, index))
                for root in roots:
                    # The command after find opens what find names: a symlink, followed.
                    found = symlink_out(absolute(root, call.cwd), call.inside)
                    if found is not None:
                        return f"{found} (a symlink `{command.text}` opens)"
                paths = roots + tuple(p for x in fed[1] for p in call.places(x, index))
            if paths is None:
                return f"what `{command.text}` reads (its paths could not be told)"
            paths = tuple(p for p in paths if p not in HARMLESS_READS)
            reach = reach_of(command, paths)
            for place in _object_places(call, index, reach):
                if not call.inside(place):
                    return f"{place} (read out of git's objects)"
            if reach.follows_symlinks:
                for place in (p for tree in reach.trees for p in call.places(tree, index)):
                    found = symlink_out(absolute(place, call.cwd), call.inside)
                    if found is not None:
                        return f"{found} (`{command.text}` follows symlinks)"
            for path in paths:
                if not call.inside(path):
                    return path
    return None


HARMLESS_READS = frozenset({"/dev/null", "/dev/zero", "/dev/stdin", "/dev/urandom", "/dev/random"})


def fed_by_find(call: Call, index: int) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """`find ROOTS ... | xargs CMD ARGS`: xargs gives CMD names that find found below its
    roots (symlinks aside: find without -L does not follow), beside CMD's own ARGS. Returns
    (roots, CMD's own paths), or None when that cannot be told (xargs reading names from a
    file with -a, operands that are not known)."""
    assert call.analysis is not None
    commands = call.analysis.commands
    command = commands[index]
    if index == 0 or not command.argv or os.path.basename(command.argv[0]) != "xargs":
        return None
    previous = commands[index - 1]
    if not previous.argv or os.path.basename(previous.argv[0]) != "find":
        return None
    if "-L" in previous.argv or "-follow" in previous.argv:
        return None
    joined = re.escape(previous.text) + r"\s*\|\s*" + re.escape(command.text)
    if re.search(joined, call.analysis.command) is None:
        return None
    options = scan(command.argv[1:], WRAPPERS["xargs"])
    inner = unwrap_once(command.argv)
    roots = touched_paths(previous)
    if options.unknown or options.paths or inner is None or roots is None:
        return None
    whole = options.has("-0", "--null") and "-print0" in previous.argv
    directories = call.shell.of(index - 1, call.cwd) if call.shell else (call.cwd,)
    if not whole and not all(
        names_split_whole(absolute(expand_home(root), directory))
        for root in roots or (".",)
        for directory in directories
    ):
        return None  # a name with a blank or a quote becomes words of xargs' choosing
    own = argv_paths(inner)
    return None if own is None else (roots, tuple(own))


# Programs that write files whose names are inside their input (archives, patches) or in
# git's objects (a checkout): an Edit rule may cover any of them.
_UNPACKERS = frozenset({"unzip", "patch", "cpio", "7z", "bsdtar", "rsync"})
_GIT_WORKTREE_WRITERS = frozenset(
    {"checkout", "restore", "reset", "merge", "pull", "rebase", "switch", "am", "apply",
     "cherry-pick", "revert", "stash", "submodule", "clone", "worktree", "read-tree",
     "checkout-index", "sparse-checkout", "clean", "mv", "rm", "bisect"}
)  # fmt: skip


def writes_unknown_files(command: SimpleCommand) -> bool:
    words = unwrap(command.argv) if command.argv else ()
    if not words:
        return False
    name = base_name(words[0])
    if name in _UNPACKERS:
        return True
    if name == "tar":
        return tar_does(words[1:], "x", ("--extract", "--get"))
    if name == "git":
        problem, sub, _, _ = split_global(words[1:])
        return bool(problem) or sub in _GIT_WORKTREE_WRITERS
    return False


def removable(call: Call, path: str) -> bool:
    """Removing (or moving away) a path takes everything below it: never the project or a
    parent of it, and never a directory that holds a protected one (`vendor/lib/.git`)."""
    where = absolute(expand_home(path), call.cwd)
    if is_critical(where, call.cwd):
        return False
    return not tree_holds(where, lambda below: below.name.lower() in PROTECTED_NAMES)


def critical_removal(call: Call, depth: int = 0) -> str | None:
    """The critical path a shell command would remove or move away, if any: in its own
    parts, in the scripts they run (`bash -c 'rm -rf /'`), and where what it removes cannot
    be told (`rm -rf "$HOME"`)."""
    if call.analysis is None:
        return None
    unknown = "paths that could not be told (they depend on the shell)"
    for index, command in enumerate(call.analysis.commands):
        removed = removed_paths(call, index)
        if removed is UNKNOWN_PATHS or (removed and call.shell_problem):
            return unknown
        for path in removed or ():
            if is_critical(expand_home(path), call.cwd):
                return path
        runs = command_runs(call.analysis, command)
        for inner in runs.commands:
            first = inner.words[0] if inner.words else None
            if inner.exact is None and (first is None or base_name(first) in REMOVAL_COMMANDS):
                return unknown  # `find ~ -exec rm -rf {} +`: what it removes is found later
        for script in runs.scripts:
            if depth >= MAX_SCRIPT_DEPTH:
                return unknown
            for inner_call in call.script_calls(index, script):
                if found := critical_removal(inner_call, depth + 1):
                    return found
    return None


UNKNOWN_PATHS: tuple[str, ...] = ("?",)


_REMOVES = re.compile(r"(?:^|[\s/;&|(`])(?:rm|rmdir|unlink|shred|mv)\b|-delete\b")


def removed_paths(call: Call, part: int) -> tuple[str, ...] | None:
    """The paths part `part` removes or moves away (None: it removes nothing;
    `UNKNOWN_PATHS`: it may, but where cannot be told)."""
    assert call.analysis is not None
    command = call.analysis.commands[part]
    if command.argv is None:
        return UNKNOWN_PATHS if _REMOVES.search(command.text) else None
    words = unwrap(command.argv)
    program = base_name(words[0]) if words else ""
    if program == "find" and "-delete" in words:
        roots = touched_paths(command)
        if roots is None:
            return UNKNOWN_PATHS
        return tuple(p for root in roots or (".",) for p in call.places(root, part))
    if program == "tar" and any(w in ("--recursive-unlink", "--unlink-first", "-U") for w in words):
        # Extracting empties what is in the way: the directory it extracts into.
        target = next((b for a, b in itertools.pairwise(words) if a in ("-C", "--directory")), ".")
        return call.places(target, part) or UNKNOWN_PATHS
    if program == "rsync" and any(w.startswith("--delete") for w in words):
        operands = [w for w in words[1:] if not w.startswith("-")]
        return call.places(operands[-1], part) if operands else UNKNOWN_PATHS
    if program not in REMOVAL_COMMANDS:
        return None
    paths = call.command_paths(part, for_write=True)
    if paths is None:
        return UNKNOWN_PATHS
    operands = [w for w in words[1:] if not w.startswith("-")]
    if program == "mv" and len(paths) > 1:
        paths = paths[:-1]  # the sources go away; the last operand is where they go
        operands = operands[:-1]
    if command.wild:
        # `rm -rf ~/*` empties the home directory as surely as removing it: a pattern that
        # matches every name in a directory removes as much as the directory.
        emptied = (p for w in operands if _matches_all(w) for p in _glob_base(call, w, part))
        paths = (*paths, *emptied)
    return paths


def _matches_all(word: str) -> bool:
    """`*`, `.*`, `dir/*`, `?*`: a last part made only of wildcards and dots."""
    last = word.rstrip("/").rsplit("/", 1)[-1]
    return is_glob(last) and set(last) <= set("*?.")


def _glob_base(call: Call, word: str, part: int) -> tuple[str, ...]:
    """The directory a pattern's matches are in: its words before the first with a glob."""
    parts = word.split("/")
    fixed = list(itertools.takewhile(lambda piece: not is_glob(piece), parts))
    base = "/".join(fixed) or ("/" if word.startswith("/") else ".")
    return tuple(p.removesuffix("/.") or "/" for p in call.places(base, part))
