"""What the prompt's volatile part says about git: a repository or not, the branch, a short status.

The seeds' system tells its model this at the start of a conversation, as a snapshot: read
once when the session opens (one `git status --short --branch`, on a thread), never per
request, so building a request stays cheap. No request waits for it: until git has answered,
a request says what `.git` itself says (`GitFactsOnTheWay`; the volatile part is not cached,
so the fuller text later costs the cache nothing). A status longer than `MAX_STATUS_LINES`
is cut, saying how many lines were left out. No git, or a git that fails, is said plainly
rather than guessed.

`git status` runs a repository's own configuration (`core.fsmonitor`, clean filters from
`.gitattributes`), so a cloned repository could run a program the moment proctor starts,
before anyone was asked anything. So it runs only inside the session's read-only sandbox
(`fence`: no writes, no network), like any read-only command the analysis waves through;
where the kernel offers no sandbox (and in headless runs, whose first request leaves at
once: live.py), git is not run at all and the branch is read from `.git/HEAD` instead, the
status left out and the model told why.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ..access.context import ToolPermissionContext
    from ..permissions.session_sandbox import SessionSandbox
    from ..sandbox.fence import Fence

MAX_STATUS_LINES = 30
GIT_TIMEOUT_S = 5.0

GitState = Literal["repository", "not-a-repository", "unknown"]


@dataclass(frozen=True, slots=True)
class GitFacts:
    state: GitState
    branch: str = ""
    status: tuple[str, ...] = ()
    omitted: int = 0
    """Status lines left out past `MAX_STATUS_LINES`."""
    why_unknown: str = ""
    why_no_status: str = ""
    """Why the status was not read (git was not run), when it was not."""

    def describe(self) -> str:
        if self.state == "not-a-repository":
            return "Is a git repository: no"
        if self.state == "unknown":
            return f"Is a git repository: unknown ({self.why_unknown})"
        lines = [
            "Is a git repository: yes",
            f"Current branch: {self.branch}",
        ]
        if self.why_no_status:
            lines.append(f"Git status: not read ({self.why_no_status}); run git status to see it")
            return "\n".join(lines)
        lines.append(
            "Git status at the start of the conversation (a snapshot; it does not update):"
        )
        if not self.status:
            lines.append("(clean)")
        lines += self.status
        if self.omitted:
            lines.append(f"... and {self.omitted} more lines (run git status to see them all)")
        return "\n".join(lines)


def sandboxed_git_facts(
    cwd: Path, sandbox: SessionSandbox, permissions: ToolPermissionContext
) -> GitFacts:
    """The facts, with git run in the session's read-only sandbox, or not run at all. Runs
    on a worker thread while the rest of the session opens (it waits there for the probe)."""
    from ..access.sandbox_policy import ReadOnly

    support = sandbox.support_on_a_thread()
    if not support.available:
        return facts_from_files(cwd, f"no sandbox to run git in: {support.problem}")
    try:
        policy = ReadOnly("the prompt's git status")
        fence = sandbox.fence(policy, permissions, None, support=support)
    except OSError as error:
        return facts_from_files(cwd, f"the sandbox could not be set up: {error}")
    try:
        return read_git_facts(cwd, fence)
    finally:
        fence.finish()


class GitFactsOnTheWay:
    """The facts while git runs on its thread: until it has answered (a headless run's
    first request may leave before it does, rather than wait), what `.git` itself says, the
    status marked as not read yet. The volatile part of the prompt is not cached, so the
    fuller text that follows costs the cache nothing."""

    def __init__(self, reading: asyncio.Future[GitFacts], cwd: Path) -> None:
        self._reading = reading
        self._meanwhile = facts_from_files(cwd, "still being read when this request was sent")

    def describe(self) -> str:
        reading = self._reading
        if reading.done() and not reading.cancelled() and reading.exception() is None:
            return reading.result().describe()
        return self._meanwhile.describe()


def read_git_facts(cwd: Path, fence: Fence | None) -> GitFacts:
    """Run git once in `cwd` inside `fence` (the read-only sandbox); with no fence, read
    only what the repository's files say without running git. Never raises."""
    if fence is None:
        return facts_from_files(cwd, "no sandbox here to run git in safely")
    try:
        done = subprocess.run(
            ["git", "--no-optional-locks", "status", "--short", "--branch"],
            cwd=cwd,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT_S,
            check=False,
            env=fence.environment(os.environ),
            preexec_fn=fence.child.apply,
        )
    except FileNotFoundError:
        return GitFacts("unknown", why_unknown="git is not installed")
    except subprocess.TimeoutExpired:
        return GitFacts("unknown", why_unknown=f"git status took over {GIT_TIMEOUT_S:g} s")
    except OSError as error:
        return GitFacts("unknown", why_unknown=f"git could not run: {error.strerror or error}")
    if done.returncode != 0:
        if "not a git repository" in done.stderr:
            return GitFacts("not-a-repository")
        first = done.stderr.strip().splitlines()[:1]
        return GitFacts("unknown", why_unknown=f"git status failed: {' '.join(first)}")
    lines = done.stdout.splitlines()
    header, status = (lines[0], lines[1:]) if lines and lines[0].startswith("## ") else ("", lines)
    return GitFacts(
        "repository",
        branch=branch_from(header),
        status=tuple(status[:MAX_STATUS_LINES]),
        omitted=max(0, len(status) - MAX_STATUS_LINES),
    )


def facts_from_files(cwd: Path, why: str) -> GitFacts:
    """Repository and branch from `.git` itself (no program runs); the status is left out."""
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        try:
            if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
                pointer = dot_git.read_text(errors="replace").strip()
                dot_git = (folder / pointer.removeprefix("gitdir:").strip()).resolve()
            if not dot_git.is_dir():
                continue
            head = (dot_git / "HEAD").read_text(errors="replace").strip()
        except OSError:
            continue
        ref = head.removeprefix("ref:").strip()
        branch = ref.removeprefix("refs/heads/") if head.startswith("ref:") else "(detached HEAD)"
        return GitFacts("repository", branch=branch or "(unknown)", why_no_status=why)
    return GitFacts("not-a-repository")


def branch_from(header: str) -> str:
    """The branch in `git status --branch`'s first line: `## main...origin/main [ahead 1]`."""
    text = header.removeprefix("## ").strip()
    for prefix in ("No commits yet on ", "Initial commit on "):
        if text.startswith(prefix):
            return text.removeprefix(prefix)
    if text.startswith("HEAD (no branch)"):
        return "(detached HEAD)"
    return text.split("...", 1)[0].split(" ", 1)[0] or "(unknown)"
