"""Running real commands through the Bash tool inside the real kernel sandbox, for tests.

The kernel is probed once per test run; tests that need a feature this machine lacks are
skipped with the reason, so the suite holds on any Linux while CI here runs the real thing.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import OPENED, ScriptedPort, make_context, make_services, outcomes_of, text_of

from core.access.context import PermissionMode, ToolPermissionContext
from core.access.rules import parse_rule
from core.access.sandbox_policy import SandboxPolicy
from core.events import EventRecorder
from core.executor import StreamingToolExecutor, ToolCall, ToolCallOutcome
from core.permissions.decide import DecisionChain
from core.permissions.session_sandbox import SANDBOX, SessionSandbox
from core.ports import PermissionAnswer
from core.sandbox.support import SandboxSupport, probe
from core.session_services import SessionServices
from core.settings.sandbox import SandboxSettings
from core.tool import ToolContext
from core.tools.bash import Bash

SUPPORT = probe()
needs_sandbox = pytest.mark.skipif(
    not SUPPORT.available, reason=f"no kernel sandbox here: {SUPPORT.problem}"
)
needs_namespaces = pytest.mark.skipif(
    not SUPPORT.namespaces, reason="this kernel gives no unprivileged user namespaces"
)
needs_network_isolation = pytest.mark.skipif(
    not (SUPPORT.namespaces or SUPPORT.seccomp),
    reason="this kernel offers neither network namespaces nor seccomp",
)
needs_seccomp = pytest.mark.skipif(not SUPPORT.seccomp, reason="this kernel has no seccomp")
TOOL = Bash()


@dataclass
class Fenced:
    """A project, a fake home with canaries, and a session whose Bash calls go through the
    real decision chain, executor and sandbox."""

    project: Path
    home: Path
    mode: PermissionMode = "default"
    rules: tuple[str, ...] = ()
    settings: SandboxSettings = field(default_factory=SandboxSettings)
    support: SandboxSupport = SUPPORT
    answers: list[PermissionAnswer] = field(default_factory=list)
    recorder: EventRecorder = field(default_factory=EventRecorder)
    port: ScriptedPort = field(init=False)
    sandbox: SessionSandbox = field(init=False)
    services: SessionServices = field(init=False)
    """One session's services for every context this helper makes: its shells (and their
    working directory) carry over between calls, as in a real session."""

    def __post_init__(self) -> None:
        self.port = ScriptedPort(self.answers)
        self.sandbox = SessionSandbox(
            self.settings,
            project=self.project,
            session_dir=self.project.parent / "session",
            support=self.support,
        )
        self.services = SessionServices()
        self.services.provide(SANDBOX, self.sandbox)
        OPENED.append(self.services)

    def context(self) -> ToolContext:
        rules = tuple(
            parse_rule(text.split(" ", 1)[1], text.split(" ", 1)[0], source="cli")  # type: ignore[arg-type]
            for text in self.rules
        )
        permissions = ToolPermissionContext(
            mode=self.mode, rules=rules, bypass_available=self.mode == "bypassPermissions"
        )
        context = make_context([TOOL], self.project, permission_context=permissions)
        options = replace(
            context.options, session_dir=self.project.parent / "session", services=self.services
        )
        return context.replace(options=options)

    async def run(self, command: str, **more: Any) -> tuple[ToolCallOutcome, str]:
        services = make_services(
            self.recorder,
            permissions=DecisionChain(sandbox=self.sandbox),
            permission_port=self.port,
        )
        executor = StreamingToolExecutor(services, self.context())
        executor.add_tool(
            ToolCall(f"toolu_{len(self.recorder.events)}", "Bash", {"command": command, **more})
        )
        [outcome] = outcomes_of([u async for u in executor.get_remaining_results()])
        return outcome, text_of(outcome)

    async def run_in(self, policy: SandboxPolicy, command: str) -> tuple[Any, str]:
        """The Bash tool alone, with a policy as the chain would have put it on the context."""
        context = self.context().replace(tool_use_id="toolu_direct", sandbox=policy)
        result = await TOOL.call(TOOL.parse_input({"command": command}), context, lambda _: None)
        return result, TOOL.result_block(result, "toolu_direct")["content"]


def make_fenced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **options: Any) -> Fenced:
    project = tmp_path / "project"
    home = tmp_path / "home"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("print('hi')\n")
    (project / ".env").write_text("API_KEY=CANARY-DOTENV\n")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("CANARY-SSH-KEY\n")
    (home / "notes.txt").write_text("CANARY-HOME\n")
    (tmp_path / "outside.txt").write_text("CANARY-OUTSIDE\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PROCTOR_TEST_SECRET_TOKEN", "CANARY-ENV")
    return Fenced(project, home, **options)


def read_all(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def repository_running(project: Path, program: str) -> None:
    """Make `project` a git repository whose configuration runs `program` on `git status`
    (core.fsmonitor): a read-only command that runs code, as a cloned repository can."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    config = project / ".git" / "config"
    config.write_text(config.read_text() + f"[core]\n\tfsmonitor = {program}\n")


def exists(path: Path) -> bool:
    """Anything at all there, a dangling symlink included."""
    return os.path.lexists(path)


def start_sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "60"])


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to reap it is not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")


_LIBC = None


def _libc():  # type: ignore[no-untyped-def]
    import ctypes

    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC


def make_message_queue() -> int:
    """A SysV message queue on the host, readable and writable by its owner."""
    queue = int(_libc().msgget(0, 0o1600))  # IPC_PRIVATE, IPC_CREAT | 0600
    assert queue >= 0
    return queue


def receive_message(queue: int) -> bytes | None:
    import ctypes

    class Message(ctypes.Structure):
        _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 32)]

    message = Message()
    size = _libc().msgrcv(queue, ctypes.byref(message), 32, 0, 0o4000)  # IPC_NOWAIT
    return None if size < 0 else bytes(message.mtext)


def remove_message_queue(queue: int) -> None:
    _libc().msgctl(queue, 0, None)  # IPC_RMID


def remove_tree(path: Path) -> None:
    """`rm -rf`, which walks trees deeper than Python's recursion allows."""
    subprocess.run(["rm", "-rf", str(path)], check=True)
