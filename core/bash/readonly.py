"""Is one simple command read-only? Each answer is "" (yes) or a sentence saying why not.

The general rule is the flag table of commands.py; the commands whose arguments carry a
language of their own (find expressions, sed and awk programs, git subcommands, xargs'
command) get a check here. Every branch ends in a refusal unless it positively
recognised the command, so a case nobody thought of is not read-only.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from core.bash.commands import READ_ONLY
from core.bash.flags import WRITES_FILE, Spec, scan, spec
from core.bash.git import (
    LIST_FILTERS,
    REMOTE_ACTIONS,
    REMOTE_READ,
    STASH_ACTIONS,
    SUBCOMMANDS,
    WORKTREE_ACTIONS,
    split_global,
)
from core.bash.parse import SimpleCommand
from core.bash.scripts import awk_problem, sed_problem
from core.bash.wrappers import PASS_THROUGH, WRAPPERS, base_name, safe_assignments, unwrap_once


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# find: how many words each primary takes, and which take a path.
_FIND_ZERO = _words(
    "-depth -d -follow -xdev -mount -noleaf -ignore_readdir_race -noignore_readdir_race"
    " -daystart -warn -nowarn -print -print0 -ls -prune -quit -true -false -nouser -nogroup"
    " -empty -readable -writable -executable -not -a -and -o -or ! ( ) ,"
)
_FIND_ONE = _words(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type -xtype"
    " -size -mtime -mmin -atime -amin -ctime -cmin -perm -user -group -uid -gid -links -inum"
    " -lname -ilname -fstype -used -maxdepth -mindepth -printf"
)
_FIND_PATH = frozenset({"-newer", "-anewer", "-cnewer", "-samefile", "-files0-from"})
_FIND_NEWER = re.compile(r"-newer[aBcmt][aBcmt]$")
_FIND_UNSAFE = {
    "-exec": "runs a command",
    "-execdir": "runs a command",
    "-ok": "runs a command",
    "-okdir": "runs a command",
    "-delete": "deletes files",
    "-fls": "writes to a file",
    "-fprint": "writes to a file",
    "-fprint0": "writes to a file",
    "-fprintf": "writes to a file",
}

SED = spec(
    "-n --quiet --silent -E -r --regexp-extended -s --separate -z --null-data -u --unbuffered"
    " -l: --line-length= --posix --debug --sandbox -e: --expression= --follow-symlinks"
    " --help --version",
    ("-i? --in-place?", "edits files in place"),
    ("-f/ --file=/", "reads its script from a file this check cannot read"),
)
AWK = spec(
    "-F: --field-separator= -v: --assign= -b --characters-as-bytes -c --traditional -C"
    " -D? -e: --source= -g -h -M -n -N -O -P --posix -r --re-interval -s -S --sandbox -t"
    " -V --version --",
    ("-f/ --file=/ -E/ --exec=/ -i/ --include=/", "reads a program this check cannot read"),
    ("-l: --load=", "loads a compiled extension"),
    ("-o? --pretty-print? -p? --profile? -d? --dump-variables?", "writes a file", WRITES_FILE),
)


def find_scan(args: tuple[str, ...]) -> tuple[str, list[str]]:
    """(problem, paths): starting points and the files that predicates name."""
    paths: list[str] = []
    i = 0
    while (i < len(args) and args[i] in ("-H", "-L", "-P")) or args[i : i + 1] == ("-D",):
        i += 2 if args[i] == "-D" else 1
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("(", "!", ")", ","):
        paths.append(args[i])
        i += 1
    while i < len(args):
        word = args[i]
        i += 1
        if word in _FIND_UNSAFE:
            return f"uses {word}, which {_FIND_UNSAFE[word]}", paths
        if word in _FIND_ZERO:
            continue
        if word in _FIND_ONE or word in _FIND_PATH or _FIND_NEWER.match(word):
            if i >= len(args):
                return f"ends without the argument of {word}", paths
            if word in _FIND_PATH:
                paths.append(args[i])
            i += 1
            continue
        return f"uses {word}, which is not a known read-only find expression", paths
    return "", paths


def _table(name: str, args: tuple[str, ...], table: Spec, globs: frozenset[int]) -> str:
    found = scan(args, table)
    if found.unknown:
        return f"uses {found.unknown}, which is not a known read-only flag of {name}"
    if found.unsafe is not None:
        return f"uses {found.unsafe[0]}, which {found.unsafe[1]}"
    if table.max_operands is not None and len(found.operands) > table.max_operands:
        return f"gives {name} an operand it would write to or act on"
    risky = any(flag.unsafe for flag in table.flags.values()) or table.max_operands is not None
    if risky and globs:
        return "has a glob that could expand to a file name that reads as a flag"
    return ""


def _git(args: tuple[str, ...], globs: frozenset[int]) -> str:
    problem, sub, rest, _ = split_global(args)
    if problem or sub is None:
        return problem
    if globs:
        return "has a glob that could expand to a file name that reads as a flag"
    if sub == "remote":
        if all(word in REMOTE_READ for word in rest):
            return ""
        actions = REMOTE_ACTIONS
    elif sub == "stash":
        actions = STASH_ACTIONS
    elif sub == "worktree":
        actions = WORKTREE_ACTIONS
    else:
        table = SUBCOMMANDS.get(sub)
        if table is None:
            return f"runs `git {sub}`, which is not a read-only git command"
        problem = _table(f"git {sub}", rest, table, frozenset())
        if not problem and sub == "reflog":
            operands = scan(rest, table).operands
            if operands and operands[0] not in ("show", "list", "exists"):
                # `git reflog expire` and `delete` rewrite the reflog; anything else is
                # read as one of them by some git version or another.
                return f"runs `git reflog {operands[0]}`, which can change the repository"
        if not problem and table.check == "listing":
            found = scan(rest, table)
            if found.operands and not found.has("-l", "--list", *LIST_FILTERS):
                return f"names a {sub} to create (list with `git {sub} --list PATTERN`)"
        if not problem and table.check == "config":
            problem = _git_config(rest, table)
        if not problem and table.check == "submodule":
            operands = scan(rest, table).operands
            if operands and operands[0] != "status":
                return f"runs `git submodule {operands[0]}`, which can change the repository"
        return problem
    if not rest or rest[0] not in actions:
        return f"runs `git {sub} {rest[0] if rest else ''}`, which can change the repository"
    problem = _table(f"git {sub} {rest[0]}", rest[1:], actions[rest[0]], frozenset())
    if not problem and sub == "remote" and rest[0] == "show":
        found = scan(rest[1:], actions["show"])
        if found.operands and not found.has("-n"):
            return (
                "runs `git remote show NAME`, which asks the remote over the network (-n does not)"
            )
    return problem


# Programs whose `--version` and `--help` only print, loading nothing from the project
# (pytest, for one, loads conftest.py first: it is not here). Named, never a path.
VERSION_ONLY = frozenset(
    {"python", "python3", "node", "npm", "npx", "pnpm", "yarn", "bun", "deno", "pip", "pip3",
     "uv", "poetry", "cargo", "rustc", "rustup", "go", "java", "javac", "gcc", "g++", "cc",
     "clang", "make", "cmake", "ninja", "ruby", "gem", "perl", "php", "tsc", "ruff", "mypy",
     "black", "isort", "docker", "kubectl", "terraform", "gh", "git", "bash", "sh", "zsh",
     "curl", "wget", "ssh", "rsync", "tar", "zip", "unzip", "gzip", "jq", "rg", "fd", "fzf",
     "tmux", "vim", "nvim", "emacs", "code", "dotnet", "swift", "kotlin", "scala", "sbt",
     "mvn", "gradle", "ffmpeg", "convert", "psql", "mysql", "sqlite3", "redis-cli"}
)  # fmt: skip

_CONFIG_READS = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list")


def _git_config(args: tuple[str, ...], table: Spec) -> str:
    """`git config` only reads with an explicit read action (`--get`, `--list`, or the
    newer `get`/`list` words); anything else may set a value."""
    found = scan(args, table)
    operands = found.operands
    if found.has(*_CONFIG_READS):
        return "" if len(operands) <= 2 else "gives `git config` a value to set"
    if operands and operands[0] in ("get", "list") and len(operands) <= 3:
        return ""
    return "runs `git config` without --get or --list, which can set configuration"


def _sed(args: tuple[str, ...], globs: frozenset[int]) -> str:
    found = scan(args, SED)
    problem = _table("sed", args, SED, globs)
    if problem:
        return problem
    scripts = [value or "" for name, value in found.options if name in ("-e", "--expression")]
    if not scripts:
        if not found.operands:
            return "has no sed script"
        scripts = [found.operands[0]]
    for script in scripts:
        problem = sed_problem(script)
        if problem:
            return f"has a sed script that {problem}"
    return ""


def _awk(args: tuple[str, ...], globs: frozenset[int]) -> str:
    problem = _table("awk", args, AWK, globs)
    if problem:
        return problem
    found = scan(args, AWK)
    programs = [value or "" for name, value in found.options if name in ("-e", "--source")]
    if not programs:
        if not found.operands:
            return "has no awk program"
        programs = [found.operands[0]]
    for program in programs:
        problem = awk_problem(program)
        if problem:
            return f"has an awk program that {problem}"
    return ""


def _xargs(args: tuple[str, ...], globs: frozenset[int]) -> str:
    inner = unwrap_once(("xargs", *args))
    found = scan(args, WRAPPERS["xargs"])
    if found.unknown:
        return f"uses {found.unknown}, which is not a known xargs flag"
    if inner is None:
        return "" if not found.operands else "has xargs options this check cannot read"
    table = READ_ONLY.get(base_name(inner[0]))
    # xargs appends words read from its input, which may look like flags: only commands
    # none of whose flags can write or run anything are safe behind it.
    if table is None or table.check or table.max_operands is not None:
        return f"feeds its input to `{inner[0]}`, which is not safe with arbitrary arguments"
    if any(flag.unsafe for flag in table.flags.values()):
        return f"feeds its input to `{inner[0]}`, whose flags can write files or run programs"
    return argv_problem(inner, frozenset())


def _date(args: tuple[str, ...], globs: frozenset[int]) -> str:
    problem = _table("date", args, READ_ONLY["date"], globs)
    if problem:
        return problem
    if any(not word.startswith("+") for word in scan(args, READ_ONLY["date"]).operands):
        return "gives date an operand that sets the system clock"
    return ""


def _printf(args: tuple[str, ...], globs: frozenset[int]) -> str:
    return "uses -v, which assigns a shell variable" if args[:1] and args[0][:2] == "-v" else ""


def _env(args: tuple[str, ...], globs: frozenset[int]) -> str:
    return "runs a command with a changed environment" if args else ""


def _command(args: tuple[str, ...], globs: frozenset[int]) -> str:
    if args[:1] in (("-v",), ("-V",)):
        return ""
    inner = unwrap_once(("command", *args))
    return (
        "has command options this check cannot read"
        if inner is None
        else argv_problem(inner, frozenset())
    )


def _man(args: tuple[str, ...], globs: frozenset[int]) -> str:
    problem = _table("man", args, READ_ONLY["man"], globs)
    if problem:
        return problem
    for operand in scan(args, READ_ONLY["man"]).operands:
        if "/" in operand:
            # man-db formats an argument with a slash as a local file, as --local-file
            # does: its preprocessors (named in the file) run.
            return f"names the file `{operand}`, which man formats with its preprocessors"
    return ""


_JQ_MODULES = re.compile(r"\b(?:import|include)\b")


def _jq(args: tuple[str, ...], globs: frozenset[int]) -> str:
    # `import "m" as $m;` and `include "m";` read files from jq's module search path (and a
    # `{search: "/anywhere"}` of the program's choosing).
    if any(_JQ_MODULES.search(arg) for arg in args):
        return "loads jq modules, which reads files this check cannot see"
    return _table("jq", args, READ_ONLY["jq"], globs)


def _tree(args: tuple[str, ...], globs: frozenset[int]) -> str:
    # tree gives -L, -P and -I the next word even inside a cluster (`-Lo 1 out` is
    # `-L 1 -o out`): a cluster is not read the way getopt reads it, so it is refused.
    for arg in args:
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
            return f"uses the cluster of options `{arg}`, which tree reads its own way"
    return _table("tree", args, READ_ONLY["tree"], globs)


def _cd(args: tuple[str, ...], globs: frozenset[int]) -> str:
    if "-" in args:
        return "goes back to the previous directory, which this check does not know"
    return _table("cd", args, READ_ONLY["cd"], globs)


def _test(args: tuple[str, ...], globs: frozenset[int]) -> str:
    """A test runs nothing, except that bash evaluates the subscript of a variable name
    given to `-v` or `-R` (`test -v 'a[$(cmd)]'` runs cmd)."""
    for flag, operand in itertools.pairwise(args):
        if flag in ("-v", "-R") and "[" in operand:
            return f"tests `{operand}`, whose subscript bash evaluates (it can run commands)"
    return ""


_CHECKS: dict[str, Callable[[tuple[str, ...], frozenset[int]], str]] = {
    "test": _test,
    "man": _man,
    "anything": lambda args, globs: "",
    "find": lambda args, globs: (
        find_scan(args)[0]
        or ("has a glob that could expand to a file name that reads as a flag" if globs else "")
    ),
    "git": _git,
    "sed": _sed,
    "awk": _awk,
    "xargs": _xargs,
    "date": _date,
    "printf": _printf,
    "env": _env,
    "command": _command,
    "cd": _cd,
    "tree": _tree,
    "jq": _jq,
}


def table_for_anything(name: str) -> bool:
    """A program harmless with any words (`echo`, `ps`): its operands are not files."""
    table = READ_ONLY.get(name)
    return table is not None and table.check == "anything" and not table.operands_are_paths


def argv_problem(argv: tuple[str, ...], globs: frozenset[int]) -> str:
    """Why this argv is not read-only (a clause to follow the command text), or ""."""
    name = base_name(argv[0])
    if name in PASS_THROUGH and name != "command":
        inner = unwrap_once(argv)
        if inner is None:
            return f"uses {name} options this check cannot read"
        return argv_problem(inner, frozenset())
    table = READ_ONLY.get(name)
    if table is None:
        if name in VERSION_ONLY and argv[1:] in (("--version",), ("--help",)):
            return ""
        if name == "go" and argv[1:] == ("version",):
            return ""
        return "is not a read-only command"
    args = argv[1:]
    # Glob positions are counted in the full argv; shift them to the arguments.
    arg_globs = frozenset(index - 1 for index in globs if index > 0)
    if table.check:
        return _CHECKS[table.check](args, arg_globs)
    return _table(name, args, table, arg_globs)


def command_problem(cmd: SimpleCommand, globs: frozenset[int] = frozenset()) -> str:
    """A sentence saying why `cmd` is not read-only, or "" when it is."""
    if cmd.argv is None:
        return f"`{cmd.text}` has words that are only known when it runs"
    if not cmd.argv:
        return f"the assignment `{cmd.text}` changes a shell variable"
    if cmd.assignments and not safe_assignments(cmd):
        return f"`{cmd.text}` sets environment variables that can change what runs"
    problem = argv_problem(cmd.argv, globs)
    if not problem:
        return ""
    if problem.startswith("is not a read-only command"):
        return f"`{' '.join(cmd.argv)}` is not a read-only command"
    return f"`{cmd.text}` {problem}"
