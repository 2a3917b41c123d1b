"""The commands a command runs: what a deny rule must see inside `bash -c`, `xargs`, `find -exec`.

A deny rule for `git push` has to hit `bash -c 'git push'`, `echo push | xargs git`,
`find . -exec git push \\;`, `env -S 'git push'` and `git -c alias.p=push p` too, because
each of them runs git push. Wrappers with a fixed shape (`timeout`, `sudo`, `nice`...) are
peeled in wrappers.py; this module handles the programs that take a command as *data*:

- a shell given `-c STRING`, `eval WORDS` and `trap STRING` parse the string as Bash;
- `env -S STRING` splits the string into words;
- `xargs CMD...` and `find ... -exec CMD... ;` run CMD with words read from input or from
  file names, which are unknown here (`None` words; `open_ended` when more may follow);
- git runs an alias defined with `-c alias.NAME=...` in place of NAME, and a subcommand
  that is not one of git's own commands may be an alias from a configuration file.

What cannot be named is reported as `unseen` (a shell reading its script from standard
input, `eval "$x"`, a string that does not parse, an interpreter's inline code, an awk or
sed program that runs commands, a builtin that evaluates subscripts, a variable or git
setting that can name a program): the caller then treats every rule as one that may cover
the command. A program this module does not know may run the words after it (`chronic git
push`), so each run of them that starts like a command is one it may run. Programs that
read commands from a file (a script, a Makefile) are not looked into: a rule speaks about
command lines, and the README says so.
"""

from __future__ import annotations

import itertools
import os
import shlex
from dataclasses import dataclass
from functools import lru_cache

from core.bash.commands import READ_ONLY
from core.bash.flags import scan
from core.bash.git import GLOBAL
from core.bash.wrappers import SAFE_ENV_VARS, WRAPPERS, base_name, unwrap_once

# How deep commands inside commands are followed before the answer becomes `unseen`.
_MAX_DEPTH = 6

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish", "rbash"})

# Commands git runs itself, so an alias can never stand in for them: its builtins (git
# 2.39's `git --list-cmds=builtins`; later gits' new ones are left out, since on 2.39 an
# alias may carry their names) and the scripts every git package ships. Any other word
# after `git` may be an alias (`git svn` is one when git-svn is not installed), so it may
# be any git command at all.
GIT_COMMANDS = frozenset(
    """
    add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr
    check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick
    clean clone column commit commit-graph commit-tree config count-objects credential
    credential-cache credential-store describe diagnose diff diff-files diff-index diff-tree
    difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg
    for-each-ref for-each-repo format-patch fsck fsck-objects gc get-tar-commit-id grep
    hash-object help hook index-pack init init-db interpret-trailers log ls-files ls-remote
    ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index
    merge-octopus merge-one-file merge-ours merge-recursive merge-recursive-ours
    merge-recursive-theirs merge-resolve merge-subtree merge-tree mergetool mktag mktree
    multi-pack-index mv name-rev notes pack-objects pack-redundant pack-refs patch-id
    pickaxe prune prune-packed pull push quiltimport range-diff read-tree rebase
    receive-pack reflog remote remote-ext remote-fd repack replace request-pull rerere reset
    restore rev-list rev-parse revert rm send-pack shortlog show show-branch show-index
    show-ref sparse-checkout stage stash status stripspace submodule switch symbolic-ref tag
    unpack-file unpack-objects update-index update-ref update-server-info upload-archive
    upload-pack var verify-commit verify-pack verify-tag version whatchanged worktree
    write-tree
    """.split()  # noqa: SIM905 - a word list reads better than 150 quoted strings
)

# git settings that name no program (others, like core.pager or diff.*.textconv, can).
_GIT_SAFE_KEYS = (
    "color.", "advice.", "log.", "user.", "i18n.", "init.", "column.", "format.", "pretty.",
    "blame.", "grep.", "status.", "branch.", "push.", "pull.", "fetch.", "commit.", "tag.",
    "merge.conflictstyle", "core.quotepath", "core.abbrev", "core.autocrlf", "core.safecrlf",
    "core.eol", "core.filemode", "core.ignorecase", "core.precomposeunicode", "safe.directory",
    "diff.renames", "diff.algorithm", "diff.noprefix", "diff.mnemonicprefix", "diff.context",
    "diff.colormoved", "rebase.autosquash", "rebase.autostash",
)  # fmt: skip

_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_XARGS_REPLACE = frozenset({"-I", "--replace", "-i"})
# Letters of a shell's options that take the next word as a value (`bash -o pipefail -c`).
_SHELL_VALUED = frozenset("oO")


@dataclass(frozen=True, slots=True)
class Inner:
    """A command run by another. `None` words are known only when it runs."""

    words: tuple[str | None, ...]
    open_ended: bool = False

    @property
    def exact(self) -> tuple[str, ...] | None:
        if self.open_ended or any(word is None for word in self.words):
            return None
        return tuple(word for word in self.words if word is not None)


@dataclass(frozen=True, slots=True)
class Runs:
    commands: tuple[Inner, ...] = ()
    unseen: str = ""  # why some command it runs cannot be named; "" when all are named
    scripts: tuple[str, ...] = ()
    """Strings it runs as Bash scripts (`bash -c STRING`, `eval`, `trap`, a `!` git alias):
    the decision chain judges each as a command of its own, paths and all."""


@lru_cache(maxsize=2048)
def commands_run(argv: tuple[str, ...], depth: int = 0) -> Runs:
    """Every command `argv` runs besides itself, through wrappers and runners, recursively.
    Pure, so memoized: the rules, the critical-path guard and the risk all ask it."""
    found: list[Inner] = []
    scripts: list[str] = []
    unseen = ""
    current: tuple[str, ...] | None = argv
    for _ in range(32):
        if not current:
            break
        runs = _runs_once(current, depth)
        found += runs.commands
        scripts += runs.scripts
        unseen = unseen or runs.unseen
        for inner in runs.commands:
            if depth >= _MAX_DEPTH:
                unseen = unseen or "commands are nested too deeply to follow"
                break
            deeper = _runs_of_inner(inner, depth + 1)
            found += deeper.commands
            scripts += deeper.scripts
            unseen = unseen or deeper.unseen
        current = unwrap_once(current)
        if current is not None:
            found.append(Inner(current))
    return Runs(tuple(found), unseen, tuple(scripts))


_UNKNOWN_WORD = "\x00"  # stands for a word known only when it runs; no real word has a NUL


def _runs_of_inner(inner: Inner, depth: int) -> Runs:
    """What an inner command runs in turn. Its unknown words (`{}`, xargs' input) stand in
    as a word nothing matches, so `find -exec sh -c 'git push' _ {} +` is still looked
    into; an unknown program is a command nobody can name."""
    if not inner.words or inner.words[0] is None:
        return Runs(unseen="a command whose program is known only when it runs")
    if (exact := inner.exact) is not None:
        # Fully known (`find -exec cat .env ;`, `env -S 'cat .env'`): judged as a command
        # line of its own, paths included.
        runs = commands_run(exact, depth)
        return Runs(runs.commands, runs.unseen, (*runs.scripts, shlex.join(exact)))
    words = tuple(_UNKNOWN_WORD if word is None else word for word in inner.words)
    runs = commands_run(words, depth)
    commands = tuple(
        Inner(tuple(None if w == _UNKNOWN_WORD else w for w in c.words), c.open_ended)
        for c in runs.commands
    )
    scripts = tuple(script for script in runs.scripts if _UNKNOWN_WORD not in script)
    unseen = runs.unseen
    if len(scripts) < len(runs.scripts):
        unseen = unseen or "a script made of words known only when it runs"
    return Runs(commands, unseen, scripts)


def _runs_once(argv: tuple[str, ...], depth: int) -> Runs:
    # Any path to a runner counts (`/usr/bin//bash`, `./bash`): whatever it is, it is
    # given a script.
    name = os.path.basename(os.path.normpath(argv[0])) if argv[0] else ""
    if name == "busybox" and len(argv) > 1:
        return _runs_once(argv[1:], depth)  # `busybox sh -c ...`: the applet runs
    if name in SHELLS:
        return _shell(argv, depth)
    if name == "eval":
        return _script(" ".join(argv[1:]), depth, "eval")
    if name == "trap":
        return _trap(argv, depth)
    if name in (".", "source") and len(argv) > 1 and argv[1] in _STDIN_FILES:
        return Runs(unseen=f"{name} {argv[1]} reads its commands from input")
    if name == "env":
        return _env(argv, depth)
    if name == "xargs":
        return _xargs(argv)
    if name == "find":
        return _find(argv)
    if name == "git":
        return _git(argv, depth)
    if why := runs_code(name, argv):
        return Runs(unseen=why)
    return _suffixes(argv, depth)


def runs_code(name: str, argv: tuple[str, ...]) -> str:
    """Why this command runs code the analysis cannot read, or ""."""
    args = argv[1:]
    if name in _ALWAYS_CODE:
        return f"{name} runs code or commands given as text"
    flags = _INLINE_CODE.get(name.rstrip("0123456789.") if name.startswith("python") else name)
    if flags and any(_is_flag(arg, flag) for arg in args for flag in flags):
        return f"{name} runs code given on its command line"
    if name in _CODE_BUILTINS and any(c in arg for arg in args for c in "$`["):
        return f"{name} evaluates its arguments, which can run commands"
    return ""


# Programs whose whole purpose is to run code or command text they are given (they are
# only here when the analysis did not find them read-only: awk and sed programs with
# system(), `e` or pipes; shells on other machines; multiplexers).
_ALWAYS_CODE = frozenset(
    {"awk", "gawk", "mawk", "nawk", "sed", "gsed", "script", "flock", "su",
     "runuser", "ssh", "tmux", "screen", "parallel", "expect", "alias", "complete", "compgen",
     "bind", "fc", "enable", "mapfile", "readarray", "osascript", "pwsh", "nsenter",
     "unshare", "chroot", "setpriv", "firejail", "doas", "pkexec", "systemd-run", "at",
     "batch", "crontab", "vim", "vi", "nvim", "emacs", "gdb", "lldb", "strace", "ltrace"}
)  # fmt: skip
# Interpreters and the options that hand them code as text.
_INLINE_CODE: dict[str, frozenset[str]] = {
    "python": frozenset({"-c"}),
    "node": frozenset({"-e", "-p", "--eval", "--print"}),
    "nodejs": frozenset({"-e", "-p", "--eval", "--print"}),
    "deno": frozenset({"eval"}),
    "bun": frozenset({"-e", "--eval", "-p", "--print"}),
    "php": frozenset({"-r"}),
    "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}),
    "lua": frozenset({"-e"}),
    "Rscript": frozenset({"-e"}),
    "tclsh": frozenset({"-c"}),
    "make": frozenset({"--eval", "-E"}),
}
# Builtins that evaluate their words as arithmetic or as names (an array subscript runs
# its command substitutions): any `$`, backquote or `[` in them may run a command.
_CODE_BUILTINS = frozenset(
    {"let", "declare", "typeset", "local", "readonly", "export", "printf", "read", "unset",
     "test", "[", "[[", "shopt", "set", "wait", "getopts"}
)  # fmt: skip
_RUNNER_NAMES = SHELLS | {"eval", "env", "xargs", "find", "git", "busybox", "trap"}


def _is_flag(word: str, flag: str) -> bool:
    """`-c` given alone, in a cluster (`-Bc`) or attached (`-cCODE`); `--eval` or `--eval=`."""
    if flag.startswith("--") or not flag.startswith("-"):
        return word == flag or word.startswith(flag + "=")
    return word.startswith("-") and not word.startswith("--") and flag[1] in word[1:]


def assignments_run(assignments: tuple[str, ...]) -> str:
    """Why these `NAME=value` words may make a command run code nobody named, or "".

    Many variables do (`BASH_ENV`, `PS4` under `set -x`, `GIT_EXTERNAL_DIFF`, `LD_PRELOAD`,
    `TAR_OPTIONS='--checkpoint-action=exec=...'`, a `PATH` that decides which program a name
    is), and no list of them is complete: only the variables known to be harmless pass."""
    for word in assignments:
        name = word.partition("=")[0].rstrip("+")
        if name not in SAFE_ENV_VARS:
            return f"setting {name} may make the command run other programs"
    return ""


def _suffixes(argv: tuple[str, ...], depth: int) -> Runs:
    """A program proctor does not know may run the words after it as a command (`chronic
    git push`, `doas sh -c '...'`): each run of words that starts like a command is one it
    may run, and a runner among them is looked into."""
    table = READ_ONLY.get(os.path.basename(argv[0]))
    if table is not None and not table.check:
        return Runs()  # a program with a flag table treats its words as data
    found: list[Inner] = []
    scripts: list[str] = []
    unseen = ""
    for start in range(1, len(argv)):
        word = argv[start]
        if word.startswith("-") or "=" in word or word == _UNKNOWN_WORD:
            continue
        found.append(Inner(argv[start:], open_ended=True))
        if os.path.basename(os.path.normpath(word)) in _RUNNER_NAMES and depth < _MAX_DEPTH:
            runs = commands_run(argv[start:], depth + 1)
            found += runs.commands
            scripts += runs.scripts
            unseen = unseen or runs.unseen
    return Runs(tuple(found), unseen, tuple(scripts))


# Script files that are really standard input (`bash /dev/stdin <<< "..."`).
_STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def _trap(argv: tuple[str, ...], depth: int) -> Runs:
    """`trap [-lp] [--] ACTION SIGNAL...` runs ACTION as a script when the signal comes."""
    words = list(argv[1:])
    while words and words[0] in ("-l", "-p", "-lp", "-pl"):
        words.pop(0)
    if words and words[0] == "--":
        words.pop(0)
    if len(words) < 2 or words[0] == "-":
        return Runs()  # listing, or resetting to the default
    return _script(words[0], depth, "trap")


def _script(text: str, depth: int, what: str) -> Runs:
    """The commands of a Bash script given as a string."""
    from core.bash.analysis import analyze  # analysis imports the classifier, not this module

    if depth >= _MAX_DEPTH:
        return Runs(unseen=f"{what} runs commands nested too deeply to follow")
    if _UNKNOWN_WORD in text:
        return Runs(unseen=f"{what} runs a script made of words known only when it runs")
    analysis = analyze(text)
    if not analysis.ok and not analysis.commands:
        return Runs(unseen=f"{what} runs a script that cannot be read ({analysis.reason})")
    found: list[Inner] = []
    unseen = "" if analysis.ok else f"{what} runs a script that cannot be read fully"
    for command in analysis.commands:
        if command.argv is None:
            unseen = unseen or f"{what} runs a command whose words are known only when it runs"
            continue
        words = tuple(
            None if command.wild and any(c in word for c in "*?[") else word
            for word in command.argv
        )
        found.append(Inner(words))
    return Runs(tuple(found), unseen, (text,))


def _shell(argv: tuple[str, ...], depth: int) -> Runs:
    """`bash -c STRING` runs STRING; `bash` alone or `-s` reads its script from input."""
    index = 1
    command_string = False
    while index < len(argv):
        word = argv[index]
        if word in ("--", "-"):
            index += 1
            break
        if not word.startswith(("-", "+")) or len(word) < 2:
            break
        index += 1
        if word.startswith("--"):
            if word in ("--rcfile", "--init-file"):
                index += 1  # the only long options that take a value
            continue
        letters = word[1:]
        if "c" in letters:
            command_string = True
        if "s" in letters:
            return Runs(unseen=f"{base_name(argv[0])} -s reads its commands from input")
        if any(letter in _SHELL_VALUED for letter in letters):
            index += 1
    if command_string:
        if index >= len(argv):
            return Runs(unseen=f"{base_name(argv[0])} -c has no command string")
        return _script(argv[index], depth, base_name(argv[0]))
    if index >= len(argv) or argv[index] in _STDIN_FILES:
        return Runs(unseen=f"{base_name(argv[0])} reads its commands from input")
    return Runs()  # a script file: not looked into (see the module docstring)


# env's options: (name, takes a value). GNU accepts any unambiguous prefix of a long one.
_ENV_LONG = {"--split-string": True, "--unset": True, "--chdir": True, "--argv0": True,
             "--ignore-environment": False, "--null": False, "--debug": False,
             "--block-signal": False, "--default-signal": False, "--ignore-signal": False,
             "--list-signal-handling": False}  # fmt: skip
_ENV_SHORT = {"S": True, "u": True, "C": True, "a": True, "i": False, "0": False, "v": False}


def _env(argv: tuple[str, ...], depth: int) -> Runs:
    """`env -S 'git push'` splits its string into the command's words."""
    index = 1
    while index < len(argv):
        word = argv[index]
        index += 1
        if word == "--" or not word.startswith("-") or word == "-":
            # Its NAME=value words, then the command (which unwrap_once finds).
            start = index if word == "--" else index - 1
            settings = tuple(itertools.takewhile(lambda w: "=" in w, argv[start:]))
            why = assignments_run(settings)
            return Runs(unseen=why) if why else Runs()
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            matches = [long for long in _ENV_LONG if long.startswith(name) and len(name) > 2]
            if len(matches) != 1:
                return Runs(unseen=f"env's option `{word}` is not one this check knows")
            if not _ENV_LONG[matches[0]]:
                continue
            if not eq:
                if index >= len(argv):
                    return Runs(unseen=f"env's option `{word}` has no value")
                value, index = argv[index], index + 1
            if matches[0] == "--split-string":
                return _split(value, argv[index:])
            continue
        for position, letter in enumerate(word[1:], start=2):
            takes = _ENV_SHORT.get(letter)
            if takes is None:
                return Runs(unseen=f"env's option `-{letter}` is not one this check knows")
            if not takes:
                continue
            value = word[position:]
            if not value:
                if index >= len(argv):
                    return Runs(unseen=f"env's option `-{letter}` has no value")
                value, index = argv[index], index + 1
            if letter == "S":
                return _split(value, argv[index:])
            break
    return Runs()


def _split(text: str, rest: tuple[str, ...]) -> Runs:
    """The words `env -S TEXT REST...` runs."""
    if any(char in text for char in "$`\\"):
        return Runs(unseen="env -S expands variables and escapes in its string")
    try:
        words = tuple(shlex.split(text))
    except ValueError:
        return Runs(unseen="env -S has a string that cannot be split")
    return Runs((Inner((*words, *rest)),)) if words or rest else Runs()


def _xargs(argv: tuple[str, ...]) -> Runs:
    """xargs runs its command with words read from input: those words are unknown."""
    found = scan(argv[1:], WRAPPERS["xargs"])
    if found.unknown:
        return Runs(unseen=f"xargs uses the option `{found.unknown}`, so its command is unclear")
    command = tuple(found.operands + found.rest) or ("echo",)
    if found.has(*_XARGS_REPLACE):
        replace = next((value for flag, value in found.options if flag in _XARGS_REPLACE), None)
        marker = replace or "{}"
        words = tuple(None if marker in word else word for word in command)
        return Runs((Inner(words),))
    return Runs((Inner(command, open_ended=True),))


def _find(argv: tuple[str, ...]) -> Runs:
    """`find ... -exec CMD {} ;` runs CMD with file names in place of `{}`."""
    found: list[Inner] = []
    index = 1
    while index < len(argv):
        if argv[index] not in _FIND_EXEC:
            index += 1
            continue
        index += 1
        start = index
        while index < len(argv) and argv[index] not in (";", "+"):
            index += 1
        words = tuple(None if "{}" in word else word for word in argv[start:index])
        if words:
            found.append(Inner(words, open_ended=index < len(argv) and argv[index] == "+"))
        index += 1
    return Runs(tuple(found))


def _git(argv: tuple[str, ...], depth: int) -> Runs:
    """An alias given on the command line runs in place of its name; an unknown subcommand
    may be an alias from a configuration file, so its first word is unknown."""
    found = scan(argv[1:], GLOBAL)
    if found.unknown or not found.operands:
        return Runs()  # _spellings in match.py reads unknown global options both ways
    sub, rest = found.operands[0], tuple(found.rest)
    if sub == _UNKNOWN_WORD:
        return Runs()  # already an unknown subcommand (see the end of this function)
    for flag, value in found.options:
        key = (value or "").partition("=")[0].lower()
        if flag in ("-c", "--config-env") and not key.startswith(("alias.", *_GIT_SAFE_KEYS)):
            return Runs(unseen=f"git's setting `{key}` can name a program for git to run")
    for flag, value in reversed(found.options):
        if flag == "--config-env" and value and value.lower().startswith(f"alias.{sub}="):
            return Runs(unseen=f"git runs the alias `{sub}` taken from the environment")
        if flag != "-c" or value is None:
            continue
        key, _, alias = value.partition("=")
        if key.lower() != f"alias.{sub}".lower():
            continue
        if alias.startswith("!"):
            return _script(" ".join((alias[1:], *map(shlex.quote, rest))), depth, "the git alias")
        try:
            words = tuple(shlex.split(alias))
        except ValueError:
            return Runs(unseen=f"git runs the alias `{sub}`, which cannot be split")
        return Runs((Inner(("git", *words, *rest)),))
    if sub not in GIT_COMMANDS:
        return Runs((Inner(("git", None, *rest)),))
    return Runs()
