"""One session's shell state: its current directory and its background shells.

- No long-lived shell. Every command is a fresh `bash --noprofile --norc -c`, started in the
  session's current directory, with an EXIT trap that writes the final `pwd -P` to a side
  file; that directory is where the next command starts. So a `cd` carries over and an
  `export` does not (each command inherits proctor's environment afresh), and a command that
  wrecks its shell cannot wreck the next one. If the command replaces the trap, `exec`s, or is
  stopped (timeout, interrupt), the directory stays what it was.
- Processes a command leaves behind after exiting normally (`server &`) are left alone;
  background work belongs in a background shell. A sandboxed command's processes end with it.
- Session state is a session service (`SHELLS`, in `context.options.services`): the one
  object every call of a session shares, whatever copy of the context it was given. Closing
  the session's services stops its background shells (the app does at exit; an atexit hook
  SIGKILLs whatever is left if it did not).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import os
import re
import shutil
import signal
import stat
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from ...abort import AbortSignal
from ...sandbox.fence import Fence
from ...session_services import ServiceKey
from ...tool import ToolContext
from .foreground import Finished, ProgressReporter, supervise
from .process import ShellProcess, exit_code_of
from .spools import file_size, remove_quietly

ShellStatus = Literal["running", "completed", "killed"]
FenceFactory = Callable[[Path], Fence]
"""Builds the sandbox fence for a command, given its spool file."""

SHELLS_DIRNAME = "shells"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


class BackgroundShell:
    """A command started with `run_in_background`, watched until it ends."""

    def __init__(self, shell_id: str, command: str, description: str, process: ShellProcess):
        self.fence_notes: tuple[str, ...] = ()
        self.id = shell_id
        self.command = command
        self.description = description
        self.process = process
        self.started_at = time.time()
        self.killed = False
        self.done = asyncio.Event()
        self.watcher = asyncio.ensure_future(self._watch())

    @property
    def spool(self) -> Path:
        return self.process.spool

    @property
    def status(self) -> ShellStatus:
        if not self.done.is_set():
            return "running"
        return "killed" if self.killed else "completed"

    @property
    def exit_code(self) -> int | None:
        code = self.process.returncode
        return None if code is None else exit_code_of(code)[0]

    async def _watch(self) -> None:
        await self.process.process.wait()
        if self.process.fenced:
            await self.process.stop(ShellSession.kill_grace_s)
        self.fence_notes = self.process.finish_fence()
        self.done.set()

    async def wait(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for the shell to end; whether it has."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.done.wait(), timeout_s)
        return self.done.is_set()

    async def kill(self, grace_s: float) -> bool:
        """Stop the shell's whole session; False when nothing of it was left running.

        A shell that has ended may have left processes behind (`server &`); they are stopped
        too, and the shell keeps its status. (While any of them lives, the kernel keeps the
        session id from being reused, so the scan cannot hit a stranger.)"""
        if self.done.is_set():
            if not self.process.alive():
                return False
        else:
            self.killed = True
        await self.process.stop_despite_cancel(grace_s)
        await self.watcher
        return True

    def describe(self) -> str:
        return f"{self.id} ({self.status})"


class ShellSession:
    """One session's shell state: the current directory and the background shells."""

    kill_grace_s: ClassVar[float] = 2.0
    """Between SIGTERM and SIGKILL. A class attribute so that tests can shorten it."""
    poll_interval_s: ClassVar[float] = 0.1
    """How often a running command's output is checked for progress."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.shells: dict[str, BackgroundShell] = {}
        self._shell_ids = itertools.count(1)
        self._spool_ids = itertools.count(1)
        self._temp_dir: Path | None = None

    def spool_dir(self, session_dir: Path | None) -> Path:
        if session_dir is not None:
            directory = session_dir / SHELLS_DIRNAME
        else:
            if self._temp_dir is None:
                self._temp_dir = Path(tempfile.mkdtemp(prefix="proctor-shells-"))
            directory = self._temp_dir
        directory.mkdir(parents=True, exist_ok=True)
        return directory

    def working_directory(self, fallback: Path) -> tuple[Path, tuple[str, ...]]:
        """Where the next command starts, and a note when that is not where the last one
        left off (its directory has gone)."""
        if self.cwd.is_dir():
            return self.cwd, ()
        if not fallback.is_dir():
            raise OSError(f"neither {self.cwd} nor the project directory {fallback} exists")
        note = f"The working directory {self.cwd} no longer exists; this ran in {fallback}."
        self.cwd = fallback
        return fallback, (note,)

    async def run(
        self,
        command: str,
        *,
        fallback_cwd: Path,
        session_dir: Path | None,
        timeout_s: float,
        abort: AbortSignal,
        progress: Callable[[Any], None],
        name: str = "",
        fence: FenceFactory | None = None,
        env_changes: Mapping[str, str | None] | None = None,
    ) -> Finished:
        """Run a command to its end, its timeout, or an abort; cancellation stops it too
        (and is re-raised once its processes are gone). With `fence`, it runs sandboxed,
        and a fence that cannot be built raises OSError before anything runs."""
        cwd, notes = self.working_directory(fallback_cwd)
        stem = f"{next(self._spool_ids)}-{_SAFE_NAME.sub('_', name) or 'command'}"
        spool = self.spool_dir(session_dir) / f"{stem}.txt"
        built = fence(spool) if fence is not None else None
        # Inside the sandbox only the scratch directory is writable: the trap writes there.
        cwd_file = built.cwd_file if built is not None else spool.with_suffix(".cwd")
        try:
            process = await ShellProcess.start(
                command, cwd, spool, cwd_file, built, env_changes, self.kill_grace_s
            )
        except BaseException:
            remove_quietly(spool, cwd_file)
            if built is not None:
                built.finish()
            raise
        reporter = ProgressReporter(spool, progress)
        try:
            stopped = await supervise(process, timeout_s, abort, reporter, self.poll_interval_s)
            if stopped != "exited":
                await process.stop(self.kill_grace_s)
        except BaseException:
            await process.stop_despite_cancel(self.kill_grace_s)
            remove_quietly(spool, cwd_file)
            process.finish_fence()
            raise
        failure = process.setup_failure()
        if stopped == "exited" and failure is None:
            self._follow_cd(cwd_file)
        if built is not None and stopped == "exited":
            # A sandboxed command's processes end with it: one left behind could create a
            # protected path after the check below (background work has run_in_background).
            await process.stop(self.kill_grace_s)
        remove_quietly(cwd_file)
        notes += process.finish_fence()
        return Finished(process.returncode, stopped, spool, file_size(spool), cwd, notes, failure)

    def _follow_cd(self, cwd_file: Path) -> None:
        """Take the directory the command ended in. The command can write this file (in a
        sandbox it lives in the command's scratch directory), so it is read as untrusted:
        a regular file, not followed through a symlink, never blocking, at most 4 KB."""
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(cwd_file, flags)
        except OSError:
            return
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
            data = os.read(fd, 4096)
        except OSError:
            return
        finally:
            os.close(fd)
        recorded = data.decode("utf-8", errors="surrogateescape").strip()
        if recorded and os.path.isabs(recorded) and Path(recorded).is_dir():
            self.cwd = Path(recorded)

    async def start_background(
        self,
        command: str,
        description: str,
        *,
        fallback_cwd: Path,
        session_dir: Path | None,
        fence: FenceFactory | None = None,
        env_changes: Mapping[str, str | None] | None = None,
    ) -> BackgroundShell:
        cwd, _ = self.working_directory(fallback_cwd)
        shell_id = f"bash_{next(self._shell_ids)}"
        spool = self.spool_dir(session_dir) / f"{shell_id}.txt"
        built = fence(spool) if fence is not None else None
        # No cwd trap: a background command runs beside later ones and must not move them.
        try:
            process = await ShellProcess.start(
                command,
                cwd,
                spool,
                fence=built,
                env_changes=env_changes,
                kill_grace_s=self.kill_grace_s,
            )
        except BaseException:
            if built is not None:
                built.finish()
            raise
        shell = BackgroundShell(shell_id, command, description, process)
        self.shells[shell_id] = shell
        return shell

    def describe_shells(self) -> str:
        if not self.shells:
            return "There are no background shells in this session."
        return "Known shells: " + ", ".join(s.describe() for s in self.shells.values()) + "."

    async def close(self) -> None:
        """Stop every running background shell and remove this session's temporary files."""
        shells = list(self.shells.values())
        await asyncio.gather(
            *(shell.kill(self.kill_grace_s) for shell in shells), return_exceptions=True
        )
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    def kill_now(self) -> None:
        """SIGKILL every running background shell without waiting (for interpreter exit)."""
        for shell in self.shells.values():
            if not shell.done.is_set():
                shell.process.signal(signal.SIGKILL)


SHELLS: ServiceKey[ShellSession] = ServiceKey("background shells", close_stage=1)
"""Where a session keeps its shell state (`context.options.services`)."""

_LIVE_SESSIONS: weakref.WeakSet[ShellSession] = weakref.WeakSet()
"""Only for the exit hook: whatever background shell is still running when the interpreter
exits (its session was never closed) is killed rather than orphaned."""


@atexit.register
def _kill_leftovers() -> None:
    for session in list(_LIVE_SESSIONS):
        session.kill_now()


def shell_session(context: ToolContext) -> ShellSession:
    """The session's shell state, made (in the context's working directory) on first use."""

    def start() -> ShellSession:
        session = ShellSession(context.cwd)
        _LIVE_SESSIONS.add(session)
        return session

    return context.options.services.setdefault(SHELLS, start)
