"""The rule offered with "yes, and don't ask again": the narrowest one a person would reuse.

A rule for `python3` would allow every Python program, so an interpreter or a launcher is
never offered bare: `python3 -m unittest` offers `Bash(python3 -m unittest:*)`, `npm run
build` offers `Bash(npm run build:*)`, `uv run pytest` offers `Bash(uv run pytest:*)`.
A command run through a wrapper (`timeout 5 npm test`) or that only runs a string (`bash -c
...`, `python3 -c ...`) offers exactly itself: no prefix would be both narrow and true.
"""

from __future__ import annotations

from ..bash import unwrap
from ..bash.wrappers import base_name

_INTERPRETERS = frozenset({"python", "python2", "python3", "node", "ruby", "perl", "php"})
_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun", "deno", "uv", "poetry", "pipenv", "hatch"})
_RUN_WORDS = frozenset({"run", "exec", "run-script", "x"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "fish", "env", "sudo", "xargs", "eval"})


def command_rule(argv: tuple[str, ...], tool_name: str = "Bash", text: str = "") -> str | None:
    """The rule to offer for one simple command (`text` as written), or None."""
    if not argv:
        return None
    wrapped = unwrap(argv) != argv
    head = None if wrapped else _head(base_name(argv[0]), argv)
    if head is None:
        exact = " ".join((text or " ".join(argv)).split())
        # Exactly this command; a `*` or parenthesis in it would read as rule syntax.
        return None if any(c in exact for c in "*()") else f"{tool_name}({exact})"
    if head == ["make"]:
        return f"{tool_name}(make)"  # exactly `make`, the default target
    return f"{tool_name}({' '.join(head)}:*)"


def _head(name: str, words: tuple[str, ...]) -> list[str] | None:
    first = words[0]
    rest = list(words[1:])
    if name in _SHELLS:
        return None
    if name in _INTERPRETERS:
        if len(rest) >= 2 and rest[0] == "-m":
            return [first, "-m", rest[1]]
        if rest and not rest[0].startswith("-"):
            return [first, rest[0]]  # the script
        return None
    if name in ("npx", "bunx", "pnpx"):
        return [first, rest[0]] if rest and not rest[0].startswith("-") else None
    if name in _RUNNERS:
        if not rest or rest[0].startswith("-"):
            return None
        if rest[0] in _RUN_WORDS:
            return (
                [first, rest[0], rest[1]] if len(rest) > 1 and not rest[1].startswith("-") else None
            )
        return [first, rest[0]]
    if name == "make":
        targets = [word for word in rest if not word.startswith("-") and "=" not in word]
        return [first, targets[0]] if targets else ["make"]
    head = [first]
    if rest and not rest[0].startswith("-"):
        head.append(rest[0])  # a subcommand (`git log`, `cargo build`) or the operand
    return head
