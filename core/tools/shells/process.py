"""One command as a process: a fresh `bash -c`, writing into its spool file, stopped whole.

- Output goes straight to a file. The child's stdout and stderr share one open spool file (so
  they interleave as written) and Python never copies a byte of it: memory stays flat however
  much a command prints, throughput is the disk's, and a grandchild that keeps the output open
  (`server &`) cannot hold the call open the way a pipe would.
- Every command leads its own session and process group (`start_new_session`). Stopping it
  sends SIGTERM (then SIGCONT, for stopped jobs) to every process group of that session, waits
  up to the grace period for them to go, then sends SIGKILL. Only a process that calls
  `setsid` itself escapes, and not from a sandbox with its own user namespace: every live
  process in that namespace is the command's. A session's groups (and a namespace's members)
  are found by scanning /proc, which nothing else lists; without procfs only the leader's
  own group is probed.
- A sandboxed command's fence is applied in the child (`preexec_fn`) before bash runs, so bash
  and everything it starts are fenced; a fence that could not be set up says so at the head
  of the spool (`setup_failure`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...abort import start_whole
from ...sandbox.fence import Fence, with_changes
from ...sandbox.kernel import SETUP_FAILED_EXIT, SETUP_FAILED_MARK
from .spools import read_head


def _bash() -> str:
    found = shutil.which("bash") or ("/bin/bash" if os.path.exists("/bin/bash") else None)
    if found is None:
        raise OSError("bash was not found on PATH, so the command could not run")
    return found


def _user_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/user")
    except OSError:
        return None


def _session_and_namespace(sid: int, namespace: str | None) -> tuple[set[int], list[int]]:
    """In one pass over /proc: the process groups of session `sid` that still have a live
    (non-zombie) member, and the live processes in user namespace `namespace` (a sandboxed
    command's own), when one is given."""
    groups: set[int] = set()
    members: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:  # no procfs: probe the leader's group alone
        try:
            os.killpg(sid, 0)
        except (ProcessLookupError, PermissionError):
            return groups, members
        return {sid}, members
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                stat_line = file.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses; the fields after it do not.
        fields = stat_line[stat_line.rfind(b")") + 2 :].split()
        if len(fields) <= 3 or fields[0] in (b"Z", b"X"):
            continue
        if int(fields[3]) == sid:
            groups.add(int(fields[2]))
        elif namespace is not None and _user_namespace(int(name)) == namespace:
            members.append(int(name))
    return groups, members


def _session_groups(sid: int) -> set[int]:
    """The process groups of session `sid` that still have a live (non-zombie) member."""
    return _session_and_namespace(sid, None)[0]


class ShellProcess:
    """One `bash -c`, leader of its own session, writing into its spool file."""

    def __init__(
        self, process: asyncio.subprocess.Process, spool: Path, fence: Fence | None = None
    ) -> None:
        self.process = process
        self.spool = spool
        self.fence = fence
        """The sandbox it runs in; `finish_fence()` once it has ended."""
        self.fenced = fence is not None
        self.user_namespace: str | None = None
        """A sandboxed command's own user namespace: every process in it is the command's."""
        if fence is not None and fence.child.namespaces:
            own = _user_namespace(os.getpid())
            theirs = _user_namespace(process.pid)
            self.user_namespace = theirs if theirs is not None and theirs != own else None

    @classmethod
    async def start(
        cls,
        command: str,
        cwd: Path,
        spool: Path,
        cwd_file: Path | None = None,
        fence: Fence | None = None,
        env_changes: Mapping[str, str | None] | None = None,
        kill_grace_s: float = 2.0,
    ) -> ShellProcess:
        """Start the command; inside `fence` when given (applied in the child before bash
        runs, so bash and everything it starts are fenced). Cancelled while bash starts,
        it lets the start finish and stops the whole command (`kill_grace_s` as usual)."""
        script = command
        if cwd_file is not None:
            # Same line as the command, so bash's "line N" in error messages stays right.
            record = f"pwd -P >| {shlex.quote(str(cwd_file))} 2>/dev/null"
            script = f"trap {shlex.quote(record)} EXIT; {command}"
        fd = os.open(spool, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        env = fence.environment(os.environ) if fence is not None else dict(os.environ)
        env = with_changes(env, env_changes or {})
        fenced: dict[str, Any] = {"preexec_fn": fence.child.apply} if fence is not None else {}
        try:
            process = await start_whole(
                asyncio.create_subprocess_exec(
                    _bash(),
                    "--noprofile",
                    "--norc",
                    "-c",
                    script,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=fd,
                    stderr=asyncio.subprocess.STDOUT,
                    cwd=cwd,
                    env=env,
                    start_new_session=True,
                    **fenced,
                ),
                lambda started: cls(started, spool, fence).stop_despite_cancel(kill_grace_s),
            )
        finally:
            os.close(fd)
            if fence is not None:
                fence.release_ruleset()
        return cls(process, spool, fence)

    def finish_fence(self) -> tuple[str, ...]:
        """Once the command has ended: the sandbox's clean-up and its notes."""
        fence, self.fence = self.fence, None
        return fence.finish() if fence is not None else ()

    def setup_failure(self) -> str | None:
        """Why the sandbox could not be set up, when that is why the command ended."""
        if not self.fenced or self.process.returncode != SETUP_FAILED_EXIT:
            return None
        try:
            head = read_head(self.spool, 4096)
        except OSError:
            return None
        if not head.startswith(SETUP_FAILED_MARK):
            return None
        return head[len(SETUP_FAILED_MARK) :].decode("utf-8", "replace").strip()

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def alive(self) -> bool:
        """Whether any process of the command's session (or, sandboxed, of its namespace)
        is still running."""
        if self.user_namespace is None:
            return bool(_session_groups(self.pid))
        groups, members = _session_and_namespace(self.pid, self.user_namespace)
        return bool(groups or members)

    def signal(self, sig: int) -> None:
        members: list[int] = []
        if self.user_namespace is None:
            groups = _session_groups(self.pid)
        else:
            groups, members = _session_and_namespace(self.pid, self.user_namespace)
        for group in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, sig)
        # A sandboxed process that called setsid has left the session, not the namespace.
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)

    async def stop(self, grace_s: float) -> None:
        """SIGTERM the whole session, SIGKILL what is left after `grace_s`, reap the leader."""
        if self.alive():
            self.signal(signal.SIGTERM)
            self.signal(signal.SIGCONT)
            if not await self._gone_within(grace_s):
                # Again and again for a moment: a process forked into a new group between one
                # scan and its signal is caught by the next.
                for _ in range(50):
                    self.signal(signal.SIGKILL)
                    if await self._gone_within(0.02):
                        break
        await self.process.wait()

    async def _gone_within(self, seconds: float) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while True:
            if not self.alive():
                return True
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.02)

    async def stop_despite_cancel(self, grace_s: float) -> None:
        """`stop`, finished even if the caller is cancelled again meanwhile: a half-done stop
        would leave processes behind."""
        task = asyncio.ensure_future(self.stop(grace_s))
        while not task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
        if not task.cancelled():
            task.exception()  # retrieved, so that a failure is not reported as unhandled


def exit_code_of(returncode: int) -> tuple[int, str | None]:
    """A return code as a shell reports it (128 + N for signal N), and the signal's name."""
    if returncode >= 0:
        return returncode, None
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return 128 - returncode, name
