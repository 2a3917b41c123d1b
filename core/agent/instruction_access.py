"""Which instruction files may reach the prompt: the person's Read rules and the project's edge.

An instruction file goes into the prompt without a Read call, so nobody is asked about it.
Two limits keep that from being a way round the permission chain:

- a Read deny or ask rule covering a file keeps it out, however it is reached
  (`Read(~/.ssh/**)` means the model never sees those files, imported or linked; nobody is
  asked about an instruction file, so an ask is a no, as for a command's `@path` include);
- a project's file, or anything it imports, must lie inside the project once links are
  followed: `@~/.ssh/id_rsa` in a cloned CLAUDE.md, or a CLAUDE.md that is a link to a key,
  would otherwise send the secret to the model as soon as the project is trusted, where a
  Read of it would have asked. Trusting a project's instructions is not letting them read
  the rest of the machine.

The user's own CLAUDE.md may import what it likes (the person wrote it), deny and ask rules
aside.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..access.context import ToolPermissionContext
from ..permissions.call import prepare
from ..permissions.decide import find_rule
from ..tools.read import Read, ReadInput
from .instructions import Instructions, LoadedInstruction, repository_root

Refusal = Callable[[LoadedInstruction], str | None]
"""Why a file read as instructions must not reach the model, or None when it may."""


def instruction_refusal(cwd: Path, rules: Callable[[], ToolPermissionContext]) -> Refusal:
    """The check for a session in `cwd`; `rules` gives its permissions when a file is
    checked, so a deny rule added during the session counts for files found after it."""
    root = (repository_root(cwd.resolve()) or cwd).resolve()
    read = Read()

    def refusal(file: LoadedInstruction) -> str | None:
        permissions = rules()
        resolved = _resolved(file.path)
        for path in dict.fromkeys((file.path, resolved)):
            call = prepare(read, ReadInput(file_path=str(path)), cwd, permissions)
            for behavior in ("deny", "ask"):  # nobody is asked about these files: ask is no
                if found := find_rule(call, behavior):
                    why = f"{found[0].describe()} covers it"
                    return f"{file.path}: {why}; not given to the model"
        if file.source == "user":
            return None
        inside = (root, *(_resolved(d) for d in permissions.additional_working_directories))
        if not any(resolved.is_relative_to(d) for d in inside):
            shown = file.path if resolved == file.path else f"{file.path} (-> {resolved})"
            return (
                f"{shown}: outside the project; a project's instructions cannot bring in other "
                "files on this machine, so it was not given to the model"
            )
        return None

    return refusal


def admitted(instructions: Instructions, refusal: Refusal) -> Instructions:
    """`instructions` without the files `refusal` keeps out, each reported as a problem."""
    files, problems = split(instructions.files, refusal)
    scoped, scoped_problems = split(instructions.scoped, refusal)
    return Instructions(
        files=tuple(files),
        problems=(*instructions.problems, *problems, *scoped_problems),
        scoped=tuple(scoped),
    )


def split(
    files: Sequence[LoadedInstruction], refusal: Refusal
) -> tuple[list[LoadedInstruction], list[str]]:
    kept: list[LoadedInstruction] = []
    problems: list[str] = []
    for file in files:
        if (why := refusal(file)) is None:
            kept.append(file)
        else:
            problems.append(why)
    return kept, problems


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path
