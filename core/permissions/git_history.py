"""Which paths a git repository holds or has ever held, for Read deny rules on git's output.

`git log -p`, `git show` and `git diff HEAD~3` print the content of files out of git's
objects, where neither the path checks nor the sandbox's masks can see which files they are.
With `Read(.env)` denied, such a command may print `.env` only if the repository has held a
`.env`: in the index, or in any commit reachable from a ref or a reflog. So the chain asks git
once for every path it knows, and a command printing history asks only when one of them is
covered by the rule.

The list is kept per repository until its refs, reflog or index change (a commit, a
checkout, an add). git runs with the repository's programs switched off, and with a time
limit: a repository that cannot be listed in time is treated as holding anything.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..sandbox.fence import git_runs_no_code, with_changes

LIST_TIMEOUT_S = 5.0
_STAMP_FILES = ("HEAD", "index", "packed-refs", "logs/HEAD", "FETCH_HEAD", "ORIG_HEAD")


@dataclass(frozen=True, slots=True)
class Repository:
    top: Path
    git_dir: Path

    def stamp(self) -> tuple[float, ...]:
        stamps: list[float] = []
        for name in _STAMP_FILES:
            try:
                stamps.append(os.stat(self.git_dir / name).st_mtime_ns)
            except OSError:
                stamps.append(0)
        return tuple(stamps)


_known: dict[Path, tuple[tuple[float, ...], tuple[Path, ...] | None]] = {}


def repository_of(directory: Path) -> Repository | None:
    """The repository `directory` is in (found as git finds it, upwards), or None."""
    current = Path(os.path.abspath(directory))
    for candidate in (current, *current.parents):
        marker = candidate / ".git"
        if marker.is_dir():
            return Repository(candidate, marker)
        if marker.is_file():
            try:
                text = marker.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return Repository(candidate, marker)
            target = text.removeprefix("gitdir:").strip()
            return Repository(candidate, (candidate / target).resolve())
    return None


def known_paths(directory: Path) -> tuple[Path, ...] | None:
    """Every path the repository around `directory` holds or held (absolute); () outside a
    repository; None when git could not list them (then it may hold anything)."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return None  # git would look elsewhere than the directories say
    repository = repository_of(directory)
    if repository is None:
        return ()
    stamp = repository.stamp()
    cached = _known.get(repository.git_dir)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    paths = _list(repository)
    _known[repository.git_dir] = (stamp, paths)
    return paths


def _list(repository: Repository) -> tuple[Path, ...] | None:
    environment = with_changes(os.environ, git_runs_no_code(os.environ))
    base = ["git", f"--git-dir={repository.git_dir}", f"--work-tree={repository.top}"]
    names: set[str] = set()
    for args in (
        ["log", "--all", "--reflog", "--format=", "--name-only", "--no-renames", "-z"],
        ["ls-files", "--cached", "-z"],
    ):
        try:
            finished = subprocess.run(
                [*base, *args],
                capture_output=True,
                env=environment,
                stdin=subprocess.DEVNULL,
                timeout=LIST_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if finished.returncode != 0 and not (
            args[0] == "log" and b"does not have" in finished.stderr
        ):
            return None  # an empty repository's log fails; anything else is unknown
        names.update(
            name for name in finished.stdout.decode("utf-8", "surrogateescape").split("\0") if name
        )
    return tuple(repository.top / name.strip("\n") for name in sorted(names))
