"""One call as the decision chain sees it, worked out once: the tool, its input, what it
targets, the analysis of a shell command, and where each part of that command runs.

Kept apart from the chain (decide.py) and from what shell commands reach (shell_reach.py),
which both read it: a path a command names is made absolute here, from every directory the
part naming it may run in, and nowhere else.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..access.context import ToolPermissionContext
from ..access.paths import inside_working_dirs
from ..access.targets import CommandTarget, RuleTarget
from ..bash import BashAnalysis, SimpleCommand, analyze, option_writes, touched_paths, unwrap
from ..tool import Tool
from .globs import expand, is_glob
from .shell_places import ShellPlaces, shell_places

MAX_SCRIPT_DEPTH = 6
"""How deep scripts inside scripts (`bash -c "bash -c '...'"`) are followed; deeper asks."""


@dataclass(slots=True)
class Call:
    """What the chain knows about one call, worked out once."""

    tool: Tool[Any, Any]
    input: Any
    cwd: Path
    permissions: ToolPermissionContext
    target: RuleTarget | None
    analysis: BashAnalysis | None
    shell: ShellPlaces | None = None
    """Where each part of a shell command runs (core/permissions/shell_places.py)."""
    _paths: dict[tuple[int, bool], tuple[str, ...] | None] = field(
        default_factory=dict, repr=False, compare=False
    )
    """`command_paths` per part, worked out once: globs are expanded against the disk, and
    the rules, the mode and the risk all ask for the same paths."""

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def shell_problem(self) -> str:
        """Why where some part of the command runs cannot be told; "" when it can."""
        return self.shell.problem if self.shell is not None else ""

    def places(self, path: str, part: int) -> tuple[str, ...]:
        """A path part `part` of a shell command names, made absolute from every directory
        that part may run in. Not folded: `link/..` must reach both_forms as written."""
        text = os.path.expanduser(path) if path.startswith("~") else path
        if text.startswith("~"):
            return ()  # `~+`, `~-`, `~nobody`: not a home directory this check can name
        if os.path.isabs(text):
            return (text,)
        return tuple(os.path.join(directory, text) for directory in self._dirs(part))

    def command_paths(self, part: int, *, for_write: bool) -> tuple[str, ...] | None:
        """The absolute paths part `part` touches, from every directory it may run in."""
        key = (part, for_write)
        if key not in self._paths:
            self._paths[key] = self._command_paths(part, for_write)
        return self._paths[key]

    def _command_paths(self, part: int, for_write: bool) -> tuple[str, ...] | None:
        assert self.analysis is not None
        command = self.analysis.commands[part]
        found: list[str] = []
        for directory in self._dirs(part):
            paths = command_paths(command, directory, for_write=for_write)
            if paths is None:
                return None
            for path in paths:
                text = os.path.expanduser(path) if path.startswith("~") else path
                if text.startswith("~") or _PROCESS_RELATIVE.match(text):
                    # `~+` is $PWD and `~-` $OLDPWD to bash; `~nobody` is nothing; and
                    # /proc/self/cwd is where the *command* runs, not where proctor does.
                    return None
                found.append(text if os.path.isabs(text) else os.path.join(directory, text))
        return tuple(dict.fromkeys(found))

    def script_calls(self, part: int, script: str) -> Iterator[Call]:
        """A script part `part` runs (`bash -c '...'`), as a call of its own, once from
        every directory the part may run in."""
        analysis = analyze(script)
        for start in self._dirs(part):
            yield replace(
                self,
                target=CommandTarget(script),
                analysis=analysis,
                shell=shell_places(analysis, start),
                _paths={},
            )

    def _dirs(self, part: int) -> tuple[Path, ...]:
        return self.shell.of(part, self.cwd) if self.shell is not None else (self.cwd,)

    def inside(self, path: str | Path) -> bool:
        directories = (self.cwd, *self.permissions.additional_working_directories)
        return inside_working_dirs(expand_home(path), self.cwd, directories)

    def writes(self) -> Iterator[str | None]:
        """Files a shell command writes through redirections and through its own options
        (`sort -o F`, `git diff --output=F`: core/bash/paths.py `option_writes`); None: a
        file not known."""
        if self.analysis is not None:
            for part, command in enumerate(self.analysis.commands):
                for redirect in command.redirects:
                    if redirect.writes:
                        places = (
                            () if redirect.target is None else self.places(redirect.target, part)
                        )
                        yield from places or (None,)
                for written in option_writes(command):
                    yield from (() if written is None else self.places(written, part)) or (None,)


def prepare(
    tool: Tool[Any, Any],
    input: Any,
    cwd: Path,
    permissions: ToolPermissionContext,
    shell_cwd: Path | None = None,
) -> Call:
    """`cwd` is the project (rules and working directories are judged from it); `shell_cwd`
    is where a shell command starts, which an earlier `cd` may have moved."""
    try:
        target = tool.rule_target(input, cwd)
    except Exception:
        target = None
    if not isinstance(target, CommandTarget):
        return Call(tool, input, cwd, permissions, target, None)
    analysis = analyze(target.command)
    shell = shell_places(analysis, shell_cwd or cwd)
    return Call(tool, input, cwd, permissions, target, analysis, shell)


_PROCESS_RELATIVE = re.compile(r"/proc/(?:self|thread-self|\d+)/(?:cwd|root|fd)(?:/|$)|/dev/fd/")


def command_paths(command: SimpleCommand, cwd: Path, *, for_write: bool) -> tuple[str, ...] | None:
    """The paths a simple command touches, globs expanded as Bash would (None: not known)."""
    paths = touched_paths(command)
    if paths is None or not command.wild:
        return paths
    # A glob names the files it matches even for a program that opens none of them: `echo
    # /etc/*` lists a directory.
    globbed = tuple(w for w in (command.argv or ())[1:] if is_glob(w) and w not in paths)
    expanded: list[str] = []
    for path in (*paths, *globbed):
        matches = expand(path, cwd, for_write=for_write)
        if matches is None:
            return None
        expanded += matches
    return tuple(expanded)


def program_of(command: SimpleCommand) -> str | None:
    if not command.argv:
        return None
    words = unwrap(command.argv)
    return os.path.basename(words[0]) if words else None


def expand_home(path: str | Path) -> Path:
    """A shell path as the shell would see it: `~` is the home directory."""
    text = os.fspath(path)
    return Path(os.path.expanduser(text)) if text.startswith("~") else Path(text)
