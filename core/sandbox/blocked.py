"""Telling the model that the sandbox, not the command, stopped something.

The kernel gives a sandboxed program the same errors as anything else refused (EACCES,
EROFS, EPERM, no route), and programs print them in their own words; nothing tells proctor
which call was refused. So the output is read for the messages those errors make, and when
one is there, the result says plainly what the sandbox allows and how to run the command
outside it. A command that prints such a line for another reason gets the note too: the
note says "probably", and costs a sentence.
"""

from __future__ import annotations

import re

from ..access.sandbox_policy import ReadOnly, SandboxPolicy, Workspace

_SIGNS = re.compile(
    r"read-only file system|permission denied|operation not permitted|network is unreachable"
    r"|connection refused|temporary failure in name resolution|could not resolve"
    r"|name or service not known|name resolution|no address associated|getaddrinfo"
    r"|cannot assign requested address|device or resource busy",
    re.IGNORECASE,
)
_MAX_LINES = 3
_MAX_LINE_CHARS = 200


def blocked_lines(output: str) -> list[str]:
    """The lines of the output that look like something the sandbox refused."""
    found: list[str] = []
    for line in output.splitlines():
        if _SIGNS.search(line):
            line = line.strip()
            if len(line) > _MAX_LINE_CHARS:
                line = line[: _MAX_LINE_CHARS - 1] + "…"
            if line not in found:
                found.append(line)
            if len(found) == _MAX_LINES:
                break
    return found


def explain(output: str, policy: SandboxPolicy) -> str | None:
    """A note for the model when the output shows a refusal, else None."""
    if not isinstance(policy, ReadOnly | Workspace):
        return None
    lines = blocked_lines(output)
    if not lines:
        return None
    if isinstance(policy, ReadOnly):
        rules = (
            "it may not create, change or delete files (a private $TMPDIR aside), reach the "
            "network, or read outside the project and the system's program directories"
        )
    else:
        rules = (
            "it may change files only inside the project and the extra working directories "
            "(protected paths such as .git/config, .git/hooks, .proctor and .claude excepted), "
            "may not reach the network, and may not read outside the project and the system's "
            "program directories"
        )
    quoted = "\n".join(f"  {line}" for line in lines)
    return (
        f"This command ran {policy.describe()}, and the sandbox probably stopped it:\n{quoted}\n"
        f"In this sandbox {rules}. If the command really needs this, call Bash again with "
        '"dangerously_disable_sandbox": true; the user will be asked to approve running it '
        "outside the sandbox."
    )
