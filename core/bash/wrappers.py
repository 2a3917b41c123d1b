"""Wrapper commands, leading assignments, and which environment variables are harmless.

A deny rule for `rm` must also catch `sudo env A=1 timeout 5 nice rm x`, so rules are
matched against the command with its wrappers peeled off. Each wrapper has its own option
table (timeout's duration, nice's adjustment, sudo's user...), because skipping a word that
is not really an option argument would hide the command behind it. When a wrapper's options
are not understood, peeling stops at the wrapper: the caller matches the raw form as well,
and an unknown command is never read-only.
"""

from __future__ import annotations

import re
import shlex

from core.bash.flags import WRITES_FILE, Spec, scan, spec
from core.bash.parse import SimpleCommand

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")

# Options of each wrapper, POSIX style: the first operand is the command (or, for timeout,
# the duration before it).
WRAPPERS: dict[str, Spec] = {
    "timeout": spec(
        "-s: --signal= -k: --kill-after= --preserve-status --foreground -v --verbose",
        stop_at_operand=True,
    ),
    "time": spec(
        "-p -a -q -v --portability --append --quiet --verbose -f: --format=",
        ("-o/ --output=/", "writes its timing to a file", WRITES_FILE),
        stop_at_operand=True,
    ),
    "nice": spec("-n: --adjustment=", numeric=True, stop_at_operand=True),
    "nohup": spec("", stop_at_operand=True),
    "stdbuf": spec("-i: -o: -e: --input= --output= --error=", stop_at_operand=True),
    "env": spec(
        "-i --ignore-environment -u: --unset= -C/ --chdir= -v --debug --block-signal?"
        " --default-signal? --ignore-signal? --list-signal-handling",
        stop_at_operand=True,
    ),
    "command": spec("-p", stop_at_operand=True),
    "builtin": spec("", stop_at_operand=True),
    "exec": spec("-c -l -a:", stop_at_operand=True),
    "sudo": spec(
        "-A -b -E -H -k -K -n -P -S -i -s -B -N -u: -g: -C: -D/ -h: -p: -r: -t: -T: -R/"
        " --askpass --background --preserve-env? --set-home --reset-timestamp"
        " --remove-timestamp --non-interactive --preserve-groups --stdin --login --shell"
        " --user= --group= --close-from= --chdir=/ --host= --prompt= --role= --type="
        " --command-timeout= --chroot=/ --bell --no-update",
        stop_at_operand=True,
    ),
    "watch": spec(
        "-n: --interval= -d? --differences? -t --no-title -b --beep -e --errexit -g"
        " --chgexit -c --color -C --no-color -x --exec -p --precise -w --no-wrap -r"
        " --no-rerun -q: --equexit=",
        stop_at_operand=True,
    ),
    "setsid": spec("-c --ctty -f --fork -w --wait", stop_at_operand=True),
    "ionice": spec("-c: --class= -n: --classdata= -t --ignore", stop_at_operand=True),
    "xargs": spec(
        "-0 --null -d: --delimiter= -n: --max-args= -L: --max-lines= -l? -P: --max-procs="
        " -s: --max-chars= -r --no-run-if-empty -t --verbose -x --exit -E: --eof? -e? -I:"
        " --replace? -i? -a/ --arg-file=/ -o --open-tty -p --interactive --process-slot-var="
        " --show-limits",
        stop_at_operand=True,
    ),
}
# Wrappers that only change how (not whether or as whom) the command runs: a read-only
# command stays read-only behind them.
PASS_THROUGH = frozenset({"timeout", "nice", "command", "builtin", "stdbuf", "ionice"})

SAFE_ENV_VARS: frozenset[str] = frozenset(
    {
        "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_NUMERIC",
        "LC_TIME", "LC_MONETARY", "LC_ADDRESS", "LC_IDENTIFICATION", "LC_MEASUREMENT",
        "LC_NAME", "LC_PAPER", "LC_TELEPHONE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
        "CLICOLOR_FORCE", "COLORTERM", "TERM", "COLUMNS", "LINES", "CI",
        "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "RUST_BACKTRACE",
        "NODE_ENV",
    }
)  # fmt: skip
# Deliberately absent: PATH, LD_PRELOAD, LD_LIBRARY_PATH, BASH_ENV, ENV, IFS, HOME,
# PYTHONPATH, PYTHONSTARTUP, NODE_OPTIONS, PERL5OPT, RUBYOPT, PAGER, MANPAGER, EDITOR,
# VISUAL, GIT_* (GIT_PAGER, GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND, GIT_CONFIG_*), PYTEST_ADDOPTS,
# RIPGREP_CONFIG_PATH: each makes an ordinary command load or run other code.


def base_name(word: str) -> str:
    """`/usr/bin/env` is `env`; a relative path such as `./ls` keeps its path (not a builtin)."""
    for prefix in ("/usr/bin/", "/bin/", "/usr/local/bin/", "/usr/sbin/", "/sbin/"):
        if word.startswith(prefix) and "/" not in word[len(prefix) :]:
            return word[len(prefix) :]
    return word


def unwrap_once(argv: tuple[str, ...]) -> tuple[str, ...] | None:
    """The command one wrapper (or one run of NAME=value words) runs; None if not understood."""
    if not argv:
        return None
    skipped = 0
    while skipped < len(argv) and _ASSIGNMENT.match(argv[skipped]):
        skipped += 1
    if skipped:
        return argv[skipped:] or None
    name = base_name(argv[0])
    table = WRAPPERS.get(name)
    if table is None:
        return None
    found = scan(argv[1:], table)
    if found.unknown or not found.operands:
        return None
    inner = (*found.operands, *found.rest)
    if name == "timeout":
        inner = inner[1:]  # the duration
    # `command -v`, `env -S` (which re-splits a string) and the like are not in the tables,
    # so the scan above already refused them as unknown.
    elif name == "watch" and not found.has("-x", "--exec"):
        # watch hands its words to `sh -c` joined by spaces; split them the same way.
        joined = " ".join(inner)
        if any(char in joined for char in ";&|<>$`()\n{}*?["):
            return None
        try:
            inner = tuple(shlex.split(joined))
        except ValueError:
            return None
    return inner or None


def unwrap(argv: tuple[str, ...]) -> tuple[str, ...]:
    """Strip wrappers and leading NAME=value words repeatedly (see the module docstring)."""
    current = argv
    for _ in range(32):
        inner = unwrap_once(current)
        if inner is None:
            return current
        current = inner
    return current


def assignment_name(word: str) -> str:
    match = _ASSIGNMENT.match(word)
    return "" if match is None else match.group()[:-1]


def safe_assignments(cmd: SimpleCommand) -> bool:
    """Every leading assignment names a harmless variable and has a static value."""
    for word in cmd.assignments:
        if assignment_name(word) not in SAFE_ENV_VARS or any(c in word for c in "$`"):
            return False
    return True


def strip_safe_assignments(cmd: SimpleCommand) -> str | None:
    """The command text without its leading safe assignments; None if another is present."""
    if not cmd.assignments:
        return cmd.text
    if not safe_assignments(cmd):
        return None
    text = cmd.text
    for word in cmd.assignments:
        text = text.lstrip()
        if not text.startswith(word):
            return None  # a redirection came first; the text cannot be cut cleanly
        text = text[len(word) :]
    return text.lstrip()
