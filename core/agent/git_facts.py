"""What the prompt's volatile part says about git: a repository or not, the branch, a short status.

The seeds' system tells its model this at the start of a conversation, as a snapshot: read
once when the session opens (one `git status --short --branch`, on the thread that prepares
the session), never per request, so building a request stays cheap and the text does not
change under the cache from one request to the next. A status longer than
`MAX_STATUS_LINES` is cut, saying how many lines were left out. No git, or a git that fails,
is said plainly rather than guessed.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

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

    def describe(self) -> str:
        if self.state == "not-a-repository":
            return "Is a git repository: no"
        if self.state == "unknown":
            return f"Is a git repository: unknown ({self.why_unknown})"
        lines = [
            "Is a git repository: yes",
            f"Current branch: {self.branch}",
            "Git status at the start of the conversation (a snapshot; it does not update):",
        ]
        if not self.status:
            lines.append("(clean)")
        lines += self.status
        if self.omitted:
            lines.append(f"... and {self.omitted} more lines (run git status to see them all)")
        return "\n".join(lines)


def read_git_facts(cwd: Path) -> GitFacts:
    """Run git once in `cwd`; never raises."""
    try:
        done = subprocess.run(
            ["git", "--no-optional-locks", "status", "--short", "--branch"],
            cwd=cwd,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT_S,
            check=False,
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


def branch_from(header: str) -> str:
    """The branch in `git status --branch`'s first line: `## main...origin/main [ahead 1]`."""
    text = header.removeprefix("## ").strip()
    for prefix in ("No commits yet on ", "Initial commit on "):
        if text.startswith(prefix):
            return text.removeprefix(prefix)
    if text.startswith("HEAD (no branch)"):
        return "(detached HEAD)"
    return text.split("...", 1)[0].split(" ", 1)[0] or "(unknown)"
