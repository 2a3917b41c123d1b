"""Shell processes for Bash, TaskOutput and KillShell: one session's directory and shells.

Why it is shaped this way:

- No long-lived shell. Every command is a fresh `bash --noprofile --norc -c`, started in the
  session's current directory, with an EXIT trap that writes the final `pwd -P` to a side
  file; that directory is where the next command starts. So a `cd` carries over and an
  `export` does not (each command inherits proctor's environment afresh), and a command that
  wrecks its shell cannot wreck the next one. If the command replaces the trap, `exec`s, or is
  stopped (timeout, interrupt), the directory stays what it was.
- Output goes straight to a file. The child's stdout and stderr share one open spool file (so
  they interleave as written) and Python never copies a byte of it: memory stays flat however
  much a command prints, throughput is the disk's, and a grandchild that keeps the output open
  (`server &`) cannot hold the call open the way a pipe would. Progress is the file's size and
  its last few KB, polled every `poll_interval_s`.
- Every command leads its own session and process group (`start_new_session`). Stopping it
  sends SIGTERM (then SIGCONT, for stopped jobs) to every process group of that session, waits
  up to `kill_grace_s` for them to go, then sends SIGKILL. Only a process that calls `setsid`
  itself escapes. Processes a command leaves behind after exiting normally (`server &`) are
  left alone; background work belongs in a background shell.
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
import shlex
import shutil
import signal
import stat
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from ..abort import AbortSignal
from ..events import OutputProgress
from ..sandbox.fence import Fence, with_changes
from ..sandbox.kernel import SETUP_FAILED_EXIT, SETUP_FAILED_MARK
from ..session_services import ServiceKey
from ..tool import ToolContext

ShellStatus = Literal["running", "completed", "killed"]
StopReason = Literal["exited", "timeout", "aborted"]
FenceFactory = Callable[[Path], Fence]
"""Builds the sandbox fence for a command, given its spool file."""

SHELLS_DIRNAME = "shells"
PROGRESS_TAIL_BYTES = 4_096
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def _bash() -> str:
    found = shutil.which("bash") or ("/bin/bash" if os.path.exists("/bin/bash") else None)
    if found is None:
        raise OSError("bash was not found on PATH, so the command could not run")
    return found


# -- process groups -----------------------------------------------------------------------


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
    ) -> ShellProcess:
        """Start the command; inside `fence` when given (applied in the child before bash
        runs, so bash and everything it starts are fenced)."""
        script = command
        if cwd_file is not None:
            # Same line as the command, so bash's "line N" in error messages stays right.
            record = f"pwd -P >| {shlex.quote(str(cwd_file))} 2>/dev/null"
            script = f"trap {shlex.quote(record)} EXIT; {command}"
        fd = os.open(spool, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        env = fence.environment(os.environ) if fence is not None else dict(os.environ)
        env = with_changes(env, env_changes or {})
        fenced: dict[str, Any] = {"preexec_fn": fence.child.apply} if fence is not None else {}
        starting = asyncio.ensure_future(
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
            )
        )
        try:
            process = await asyncio.shield(starting)
        except asyncio.CancelledError:
            # Cancelled while bash starts: asyncio's own clean-up would kill bash alone, and
            # what it has started already would run on. Let the start finish instead, then
            # stop the whole command as a command cancelled later is stopped.
            while not starting.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(starting)
            if not starting.cancelled() and starting.exception() is None:
                started = cls(starting.result(), spool, fence)
                await started.stop_despite_cancel(ShellSession.kill_grace_s)
            raise
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


# -- spool files ----------------------------------------------------------------------------


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def read_head(path: Path, limit: int) -> bytes:
    with open(path, "rb") as file:
        return file.read(limit)


def read_tail(path: Path, limit: int) -> tuple[bytes, bool]:
    """The last `limit` bytes of the file, and whether that is less than the whole file."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        start = max(size - limit, 0)
        file.seek(start)
        return file.read(limit), start > 0


def decode_output(data: bytes, *, cut_in_front: bool = False) -> str:
    """Bytes from a spool as text; a tail cut mid-file starts at its first whole line."""
    text = data.decode("utf-8", errors="replace")
    if cut_in_front:
        newline = text.find("\n")
        if 0 <= newline < len(text) - 1:
            text = text[newline + 1 :]
    return text


def remove_quietly(*paths: Path) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            path.unlink()


# -- foreground runs ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finished:
    """A foreground command that has ended; the caller owns (and must remove) `spool`."""

    returncode: int | None
    stopped: StopReason
    spool: Path
    size_bytes: int
    cwd: Path
    """The directory the command ran in."""
    notes: tuple[str, ...] = ()
    sandbox_failure: str | None = None
    """Why the sandbox could not be set up: then the command never ran."""


class _ProgressReporter:
    """Reports the spool's growth: its size and the text of its last few KB."""

    def __init__(self, spool: Path, progress: Callable[[Any], None]) -> None:
        self.spool = spool
        self.progress = progress
        self.started = time.monotonic()
        self.reported = 0

    def tick(self) -> None:
        size = file_size(self.spool)
        if size == self.reported:
            return
        self.reported = size
        try:
            data, cut = read_tail(self.spool, PROGRESS_TAIL_BYTES)
            self.progress(
                OutputProgress(
                    text=decode_output(data, cut_in_front=cut),
                    total_bytes=size,
                    elapsed_s=round(time.monotonic() - self.started, 1),
                    spool=self.spool,
                )
            )
        except Exception:  # a broken display must not take the command down
            return


async def _supervise(
    process: ShellProcess,
    timeout_s: float,
    abort: AbortSignal,
    reporter: _ProgressReporter,
    poll_s: float,
) -> StopReason:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    exited = asyncio.ensure_future(process.process.wait())
    aborted = asyncio.ensure_future(abort.wait())
    try:
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return "timeout"
            done, _ = await asyncio.wait(
                (exited, aborted), timeout=min(poll_s, remaining), return_when="FIRST_COMPLETED"
            )
            if exited in done:
                return "exited"
            if aborted in done:
                return "aborted"
            reporter.tick()
    finally:
        exited.cancel()
        aborted.cancel()


# -- background shells ----------------------------------------------------------------------


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


# -- sessions -------------------------------------------------------------------------------


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
            process = await ShellProcess.start(command, cwd, spool, cwd_file, built, env_changes)
        except BaseException:
            remove_quietly(spool, cwd_file)
            if built is not None:
                built.finish()
            raise
        reporter = _ProgressReporter(spool, progress)
        try:
            stopped = await _supervise(process, timeout_s, abort, reporter, self.poll_interval_s)
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
                command, cwd, spool, fence=built, env_changes=env_changes
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


SHELLS: ServiceKey[ShellSession] = ServiceKey("background shells")
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
