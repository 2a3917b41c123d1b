"""`$ARGUMENTS` and `$1`, `$2`… filled in: one rule for custom commands and skills.

A person writes a command file or a SKILL.md for the seeds' system, and both take arguments
the same way there, so here both share this one function: a slash command's arguments
(core/agent/commands.py) and the Skill call's `args` (core/tools/skill.py). It sits in the
tools layer because the Skill tool needs it and the agent layer above may import it; it
depends on nothing but the standard library.
"""

from __future__ import annotations

import re
import shlex

_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9][0-9]*)")


def expand(body: str, arguments: str) -> str:
    """The template with `$ARGUMENTS` (all of them) and `$1`, `$2`… (each, shell-quoted
    words) filled in; a missing one is empty. Arguments given to a template that uses no
    placeholder are added at the end, as the seeds' system does, so they are never lost."""
    words = _words(arguments)
    used = False

    def fill(match: re.Match[str]) -> str:
        nonlocal used
        used = True
        key = match.group(1)
        if key == "ARGUMENTS":
            return arguments
        index = int(key) - 1
        return words[index] if index < len(words) else ""

    text = _PLACEHOLDER.sub(fill, body).strip()
    if arguments and not used:
        text = f"{text}\n\nARGUMENTS: {arguments}"
    return text


def _words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words rather than nothing
        return arguments.split()
