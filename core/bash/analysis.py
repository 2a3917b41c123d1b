"""The whole-command verdict: parse once, then ask each simple command.

Structural reasons (a parse error, a forbidden character, a substitution, a background
job, a redirection that writes) come before per-command ones, because they make the
per-command answers meaningless: `ls $(rm x)` is about the substitution, not about ls.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from core.bash.parse import MAX_SUBCOMMANDS, SimpleCommand, forbidden_character, parse
from core.bash.readonly import command_problem


@dataclass(frozen=True, slots=True)
class BashAnalysis:
    command: str
    ok: bool
    commands: tuple[SimpleCommand, ...]
    read_only: bool
    reason: str
    has_substitution: bool

    def subcommand_texts(self) -> tuple[str, ...]:
        return tuple(cmd.text for cmd in self.commands)


def analyze_uncached(command: str) -> BashAnalysis:
    character = forbidden_character(command)
    if character is not None:
        # Parsed anyway so deny rules still see the commands a person might think it holds.
        walk = parse(command)
        reason = f"the command contains the control or invisible character {character}"
        return BashAnalysis(
            command, False, tuple(walk.commands), False, reason, walk.has_substitution
        )
    if not command.strip():
        return BashAnalysis(command, False, (), False, "the command is empty", False)
    walk = parse(command)
    commands = tuple(walk.commands)
    reason = ""
    if walk.syntax_error:
        reason = f"the command could not be parsed ({walk.syntax_error})"
    elif walk.unknown:
        reason = f"the command uses the construct `{walk.unknown}`, which this check does not know"
    elif len(commands) > MAX_SUBCOMMANDS:
        reason = (
            f"the command has {len(commands)} parts, more than {MAX_SUBCOMMANDS} can be checked"
        )
    ok = not reason
    if not reason and walk.problems:
        reason = walk.problems[0]
    if not reason:
        for cmd, globs in zip(commands, walk.globs, strict=True):
            for redirect in cmd.redirects:
                if redirect.writes:
                    target = redirect.target or "?"
                    reason = f"the output redirection `{redirect.operator} {target}` writes a file"
                    break
            reason = reason or command_problem(cmd, globs)
            if reason:
                break
    if not commands and not reason:
        reason = "the command has no commands to run"
    return BashAnalysis(command, ok, commands, not reason, reason, walk.has_substitution)


@lru_cache(maxsize=4096)
def analyze(command: str) -> BashAnalysis:
    """Parse and classify a Bash command (pure; memoized)."""
    return analyze_uncached(command)
