"""Where a demo session works, and what becomes of that folder when the run ends.

The demo's default scenarios work on a scratch copy of the sample project in the system's
temporary directory, so a person can watch real edits and commands without risking their
own files. Why it is shaped this way:

- Demo sessions are kept under the sample project (`sample_dir()`), not under their copy,
  and each records its copy in meta.json: `--demo --continue` then finds the last demo
  session and carries on in the copy it worked in. If that copy is gone, the person is told
  so and the demo starts a new session on a fresh copy.
- The rule for removing copies: a run removes the copy it made when it ends, unless the
  person said `--keep-workspace`. A copy carried on from an earlier run was kept on
  purpose, so it stays kept. Either way the run says which happened (`end_workspace`).
- Only folders named `proctor-demo-*` right in the temporary directory, made by this user
  and not links, are ever used or removed: a meta.json edited to name another folder, or a
  link planted under a kept copy's name, must not send the demo's scripted edits, or a
  removal, there.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .options import SessionOptions
from .sessions import Session, read_meta

if TYPE_CHECKING:
    from .scenario import Scenario


@dataclass(frozen=True, slots=True)
class ScratchWorkspace:
    """The demo's copy of the sample project, and what becomes of it when the run ends."""

    path: Path
    keep: bool
    """Left in place at the end: `--keep-workspace`, or a copy carried on from before."""
    carried_on: bool
    """Made by an earlier run and kept then; this run continues in it."""


@dataclass(frozen=True, slots=True)
class DemoPlace:
    """What `demo_place` decided: the workspace, the session to carry on (None: a new
    one), and what to tell the person."""

    scratch: ScratchWorkspace
    earlier: Session | None
    notes: tuple[str, ...]


def sample_dir() -> Path:
    """The project demo sessions are kept under."""
    from .demo import SAMPLE_PROJECT_DIR

    return SAMPLE_PROJECT_DIR.resolve()


def demo_place(scenario: Scenario, earlier: Session | None, options: SessionOptions) -> DemoPlace:
    """The kept copy of `earlier` to carry on in, or a fresh copy (and a new session)."""
    from .demo import demo_workspace

    notes: list[str] = []
    kept = kept_workspace(earlier) if earlier is not None else None
    if earlier is not None and kept is None:
        recorded = read_meta(earlier).workspace or "none was recorded"
        notes.append(
            f"the demo workspace of session {earlier.id} is gone ({recorded}), so this is a "
            "new demo session on a fresh copy"
        )
        earlier = None
    if kept is not None:
        notes.append(f"the demo carries on in its kept workspace: {kept}")
        return DemoPlace(ScratchWorkspace(kept, keep=True, carried_on=True), earlier, (*notes,))
    fresh = demo_workspace(scenario, options.cwd)
    fate = (
        "kept when the app exits (--keep-workspace)"
        if options.keep_workspace
        else "removed when the app exits unless you pass --keep-workspace"
    )
    notes.append(f"the demo works on a scratch copy of the sample project: {fresh}; {fate}")
    scratch = ScratchWorkspace(fresh, keep=options.keep_workspace, carried_on=False)
    return DemoPlace(scratch, None, (*notes,))


def kept_workspace(session: Session) -> Path | None:
    """The scratch copy a demo session worked in, if it is still there to carry on in."""
    recorded = read_meta(session).workspace
    if not recorded:
        return None
    path = Path(recorded)
    return path if is_demo_copy(path) and path.is_dir() else None


def is_demo_copy(path: Path) -> bool:
    from .demo import DEMO_WORKSPACE_PREFIX

    temp = Path(tempfile.gettempdir()).resolve()
    if not path.name.startswith(DEMO_WORKSPACE_PREFIX) or path.parent.resolve() != temp:
        return False
    # The temporary directory is everyone's: a link or another user's folder under the
    # demo's name (made after the kept copy was cleaned away, say) is not the demo's copy.
    try:
        info = path.lstat()
    except OSError:
        return True  # not there (yet): nothing can be sent through it
    mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return mine and not stat.S_ISLNK(info.st_mode)


def discard(scratch: ScratchWorkspace | None) -> None:
    """Remove a copy no session will use (setting the session up failed)."""
    if scratch is not None and not scratch.carried_on and is_demo_copy(scratch.path):
        shutil.rmtree(scratch.path, ignore_errors=True)


def end_workspace(scratch: ScratchWorkspace | None) -> str | None:
    """What becomes of the demo's scratch workspace now that the session is over, said in
    words for the person: removed, or kept and why. None when there is no scratch copy."""
    if scratch is None:
        return None
    if scratch.keep:
        why = "carried on from before" if scratch.carried_on else "--keep-workspace"
        return (
            f"kept the demo workspace {scratch.path} ({why}); `proctor --demo --continue` "
            "carries on there, and you may delete it when done"
        )
    if not is_demo_copy(scratch.path):  # never remove what the demo did not make
        return f"left {scratch.path} in place: it is not a demo scratch copy"
    shutil.rmtree(scratch.path, ignore_errors=True)
    if scratch.path.exists():
        return f"could not remove all of the demo workspace {scratch.path}"
    return f"removed the demo workspace {scratch.path} (--keep-workspace keeps it)"
