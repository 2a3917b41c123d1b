"""The session's sandbox: its settings, what the kernel offers, and the fences it builds.

One per session, shared by every call (sub-agents included) as the session service `SANDBOX`.
The kernel is probed once, on a thread, as soon as the session starts; the first decision
that needs the answer awaits it, so nothing is ever decided on a guess. The status line
(`status()`) says what the sandbox is here, for the status bar and headless stderr.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import shlex
from collections.abc import Iterable
from pathlib import Path

from ..access.context import ToolPermissionContext
from ..access.paths import PathPattern, compile_pattern
from ..access.sandbox_policy import ReadOnly, Workspace
from ..access.targets import rule_family
from ..sandbox.fence import Fence, FenceBuilder, FenceInputs
from ..sandbox.support import UNPROBED, SandboxSupport, probe
from ..session_services import ServiceKey
from ..settings.mcp_servers import McpServerConfig
from ..settings.sandbox import SandboxSettings
from ..settings.values import HookEntry, Settings
from .match import rule_base
from .sandboxing import SandboxView


class SessionSandbox:
    def __init__(
        self,
        settings: SandboxSettings,
        *,
        project: Path,
        session_dir: Path | None = None,
        protected_files: Iterable[Path] = (),
        support: SandboxSupport | None = None,
    ) -> None:
        self.settings = settings
        self.project = project
        self.session_dir = session_dir
        self.protected_files = tuple(protected_files)
        self._support = support
        self._probing: asyncio.Future[SandboxSupport] | None = None
        self._probe_done: concurrent.futures.Future[SandboxSupport] | None = None
        self._builder: FenceBuilder | None = None

    # -- what the kernel offers -----------------------------------------------------------

    def start_probe(self) -> None:
        """Probe on a thread now; `view()` waits for it. Needs a running loop."""
        if self._support is None and self._probing is None and self.settings.enabled:
            # On the thread now, not at the loop's next turn: the caller may go on with
            # a long step that never yields (importing the SDK) while the probe runs.
            self._probe_done = concurrent.futures.Future()
            self._probing = asyncio.get_running_loop().run_in_executor(None, self._probe)

    def _probe(self) -> SandboxSupport:
        found = probe()
        assert self._probe_done is not None
        self._probe_done.set_result(found)
        return found

    def support_on_a_thread(self) -> SandboxSupport:
        """`support()` for a worker thread: blocks until the probe started here has answered
        (start_probe must have run; with the sandbox switched off, says so at once)."""
        if self._support is not None:
            return self._support
        if not self.settings.enabled:
            return SandboxSupport(problem="switched off in settings")
        assert self._probe_done is not None, "start_probe() first"
        return self._probe_done.result()

    async def support(self) -> SandboxSupport:
        if self._support is None:
            if not self.settings.enabled:
                self._support = SandboxSupport(problem="switched off in settings")
            else:
                self.start_probe()
                assert self._probing is not None
                self._support = await self._probing
        return self._support

    @property
    def known_support(self) -> SandboxSupport:
        """What is known now, without waiting (UNPROBED while the probe runs)."""
        return self._support or UNPROBED

    async def view(self) -> SandboxView:
        return SandboxView(self.settings, await self.support())

    def status(self) -> str:
        """`sandbox: files+net`, `sandbox: off — <why>`: one line for people."""
        if not self.settings.enabled:
            return "sandbox: off — switched off in settings (sandbox.enabled)"
        support = self._support
        if support is None:
            return "sandbox: checking…"
        if not support.available:
            refuse = (
                " (commands are refused: failIfUnavailable)"
                if self.settings.fail_if_unavailable
                else ""
            )
            return f"sandbox: off — {support.problem}{refuse}"
        return f"sandbox: {support.strength()}"

    # -- fences -------------------------------------------------------------------------

    def fence(
        self,
        policy: ReadOnly | Workspace,
        permissions: ToolPermissionContext,
        spool: Path | None,
        *,
        support: SandboxSupport | None = None,
    ) -> Fence:
        """The fence for one command. Raises OSError when it cannot be built: the command
        must then not run. (`support`: what a worker thread was told, before `support()`.)"""
        support = support or self._support
        if support is None or not support.available:
            raise OSError(f"the sandbox is not available ({self.status()})")
        if self._builder is None:
            self._builder = FenceBuilder(support, session_dir=self.session_dir)
        return self._builder.build(policy, self.inputs(permissions), spool)

    def inputs(self, permissions: ToolPermissionContext) -> FenceInputs:
        project = self.project
        read_denies: list[PathPattern] = []
        edit_denies: list[PathPattern] = []
        for rule in permissions.rules_with("deny"):
            family = rule_family(rule.tool_name)
            if family is None or rule.content is None:
                continue
            pattern = compile_pattern(
                rule.content, "deny", cwd=project, base=rule_base(rule, project)
            )
            (read_denies if family == "read" else edit_denies).append(pattern)
        settings = self.settings
        read_denies += [self._pattern(text) for text in settings.deny_read]
        edit_denies += [self._pattern(text) for text in settings.deny_write]
        return FenceInputs(
            project=project,
            additional_dirs=permissions.additional_working_directories,
            deny_read=tuple(read_denies),
            deny_write=tuple(edit_denies),
            allow_read=tuple(self._path(text) for text in settings.allow_read),
            allow_write=tuple(self._path(text) for text in settings.allow_write),
            protected_files=self.protected_files,
        )

    def _path(self, text: str) -> Path:
        return Path(os.path.normpath(self.project / os.path.expanduser(text)))

    def _pattern(self, text: str) -> PathPattern:
        """A settings path (`~/x`, `/abs`, `rel`, globs allowed) as an anchored pattern."""
        path = os.path.expanduser(text)
        absolute = path if os.path.isabs(path) else os.fspath(self.project / path)
        return compile_pattern("/" + absolute, "deny", cwd=self.project, base=None)

    async def close(self) -> None:
        if self._probing is not None and not self._probing.done():
            self._probing.cancel()
            with contextlib.suppress(BaseException):
                await self._probing
        if self._builder is not None:
            self._builder.close()
            self._builder = None


SANDBOX: ServiceKey[SessionSandbox] = ServiceKey("sandbox", close_stage=2)
"""Where a session keeps its sandbox (`context.options.services`); Bash fences with it."""


def hook_files(entries: tuple[HookEntry, ...], cwd: Path) -> tuple[Path, ...]:
    """The programs hooks run, when they are files: a sandboxed command must never be able
    to rewrite what will later run outside the sandbox."""
    found: list[Path] = []
    for entry in entries:
        for hook in entry.hooks:
            text = hook.command
            for name in ("CLAUDE_PROJECT_DIR", "PROCTOR_PROJECT_DIR"):
                text = text.replace("${" + name + "}", str(cwd)).replace("$" + name, str(cwd))
            try:
                words = shlex.split(text)
            except ValueError:
                continue
            for word in words[:2]:  # `./check.sh`, or `python3 .proctor/hooks/check.py`
                path = _program_file(cwd, word)
                if path is not None:
                    found.append(path)
    return tuple(dict.fromkeys(found))


def server_files(servers: Iterable[McpServerConfig], cwd: Path) -> tuple[Path, ...]:
    """The files stdio MCP servers run, when their command or an argument names one
    (`./server.sh`, `python3 tools/server.py`, `node build/index.js`): like a hook's, what
    the agent writes there runs outside the sandbox at the server's next start."""
    found: list[Path] = []
    for server in servers:
        if server.transport != "stdio":
            continue
        base = server.cwd or cwd
        for word in (server.command, *server.args):
            path = _program_file(base, word)
            if path is not None:
                found.append(path)
    return tuple(dict.fromkeys(found))


def _program_file(base: Path, word: str) -> Path | None:
    """The file `word` may name, whether or not it exists yet: a hook or server whose script
    is missing runs whatever the agent writes there first, so that path is guarded too
    (a word that is no file at all only makes a write to that name ask). Options and
    directories are not programs."""
    if not word or word.startswith("-"):
        return None
    try:
        path = (base / os.path.expanduser(word)).resolve()
        return None if path.is_dir() else path
    except (OSError, RuntimeError, ValueError):
        return None


def program_files(settings: Settings, cwd: Path) -> tuple[Path, ...]:
    """Every file the settings run outside the sandbox: hook scripts and MCP servers'."""
    return tuple(
        dict.fromkeys((*hook_files(settings.hooks, cwd), *server_files(settings.mcp_servers, cwd)))
    )
