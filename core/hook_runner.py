"""`CommandHookRunner` runs the `hooks` section of the settings as shell commands. Why it is
shaped this way:

- Every hook gets its own process group (`start_new_session`), so a timeout can kill the
  whole tree it started (SIGTERM, then SIGKILL after a short grace), not just the shell.
- Hooks matching one event run in parallel and are combined in configuration order, so the
  outcome does not depend on which finished first: deny beats ask beats allow, reasons are
  joined, contexts and messages concatenated, any `continue: false` stops.
- A hook's updatedInput counts only from a hook that allowed or asked (a denying or silent
  hook has no say on the input); with several, the last in configuration order wins. The
  decision chain checks the updated input against the rules again.
- The same command configured twice for one event (say in `.claude` and `.proctor` files)
  runs once, for the highest source.
- A hook that fails in any way (cannot start, times out, exits non-zero other than 2, prints
  JSON of the wrong shape) is a non-blocking error shown to the user; nothing raises out of
  the runner. Exit 2 blocks: PreToolUse denies (stderr is the reason for the model), PostToolUse
  gives stderr to the model, UserPromptSubmit and Stop report `blocked`.
- Hooks from project sources run only in a trusted project: a cloned repository must not run
  commands on the user's machine before they agreed to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .abort import start_whole
from .hooks import (
    NO_EVENT_OUTCOME,
    NO_POST_OUTCOME,
    NO_PRE_OUTCOME,
    EventHookOutcome,
    HookCall,
    HookEvent,
    HookPermission,
    PostToolUseOutcome,
    PreToolUseOutcome,
)
from .settings.values import PROJECT_SOURCES, HookCommand, HookEntry

_T = TypeVar("_T")
_TOOL_EVENTS: frozenset[str] = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
_PLAIN_NAMES = re.compile(r"[\w-]+(?:\|[\w-]+)*")
_PERMISSIONS: dict[str, HookPermission] = {"allow": "allow", "deny": "deny", "ask": "ask"}
_RANK: dict[HookPermission | None, int] = {None: 0, "allow": 1, "ask": 2, "deny": 3}
_SHOWN_CHARS = 2000
"""How much of a hook's stderr a message quotes; a hook may print megabytes."""


@dataclass(frozen=True, slots=True)
class _Ran:
    """What one hook asked for, read from its exit code and output."""

    hook: HookCommand
    permission: HookPermission | None = None
    reason: str | None = None
    updated_input: Mapping[str, Any] | None = None
    additional_context: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()
    blocked: bool = False
    prevent_continuation: bool = False
    stop_reason: str | None = None
    updated_output: Any = None


class _WrongShape(ValueError):
    """A hook's JSON output that is not what the protocol allows."""


@dataclass(slots=True)
class _Matcher:
    matches: Callable[[str], bool]
    error: str | None = None


class CommandHookRunner:
    """Runs configured command hooks; satisfies `HookRunner`, plus `run_event`."""

    kill_grace_s: float = 1.0
    """How long a timed-out hook gets between SIGTERM and SIGKILL."""

    def __init__(
        self,
        entries: Sequence[HookEntry],
        *,
        session_id: str,
        transcript_path: Path | None,
        cwd: Path,
        permission_mode: Callable[[], str],
        trusted: bool,
    ) -> None:
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.cwd = cwd
        self.permission_mode = permission_mode
        self.trusted = trusted
        self._project_sources = PROJECT_SOURCES
        self._entries = tuple(entries)
        self._matchers: dict[str | None, _Matcher] = {}
        self._pending: list[str] = []
        self._told_untrusted = False
        self._env = {**os.environ, "PROCTOR_PROJECT_DIR": str(cwd), "CLAUDE_PROJECT_DIR": str(cwd)}

    # --- the HookRunner protocol ---------------------------------------------------------

    async def pre_tool_use(self, call: HookCall) -> PreToolUseOutcome:
        try:
            payload = self._tool_payload("PreToolUse", call)
            runs, notes = await self._run("PreToolUse", call.tool_name, payload)
            return _combine_pre(runs, notes)
        except Exception as error:  # a broken guard: the call asks, it never runs unguarded
            message = f"PreToolUse hooks failed ({error}); the call asks instead."
            return PreToolUseOutcome(permission="ask", reason=message, messages=(message,))

    async def post_tool_use(self, call: HookCall, response: Any) -> PostToolUseOutcome:
        payload = {**self._tool_payload("PostToolUse", call), "tool_response": response}
        return await self._post("PostToolUse", call, payload)

    async def post_tool_use_failure(self, call: HookCall, error: str) -> PostToolUseOutcome:
        payload = {**self._tool_payload("PostToolUseFailure", call), "error": error}
        return await self._post("PostToolUseFailure", call, payload)

    async def run_event(self, event: HookEvent, payload: Mapping[str, Any]) -> EventHookOutcome:
        """UserPromptSubmit, SessionStart, Stop or PreCompact; `payload` adds to the common
        fields.

        Matchers are ignored except for SessionStart, where they match `payload["source"]`
        (startup, resume, clear) when it is given, and PreCompact (`trigger`: manual, auto).
        """
        try:
            # SessionStart's matchers match its source; PreCompact's, manual or auto.
            key = {"SessionStart": "source", "PreCompact": "trigger"}.get(event)
            target = payload.get(key) if key else None
            full = {**self._base_payload(event), **payload}
            runs, notes = await self._run(event, target if isinstance(target, str) else None, full)
            return _combine_event(runs, notes)
        except Exception as error:
            return EventHookOutcome(messages=(f"{event} hooks failed: {error}",))

    # --- selecting and running -----------------------------------------------------------

    async def _post(
        self, event: HookEvent, call: HookCall, payload: dict[str, Any]
    ) -> PostToolUseOutcome:
        try:
            runs, notes = await self._run(event, call.tool_name, payload)
            return _combine_post(runs, notes)
        except Exception as error:
            return PostToolUseOutcome(messages=(f"{event} hooks failed: {error}",))

    def _base_payload(self, event: HookEvent) -> dict[str, Any]:
        try:
            mode = self.permission_mode()
        except Exception:
            mode = "default"
        transcript = str(self.transcript_path) if self.transcript_path else None
        return {
            "session_id": self.session_id,
            "transcript_path": transcript,
            "cwd": str(self.cwd),
            "permission_mode": mode,
            "hook_event_name": event,
        }

    def _tool_payload(self, event: HookEvent, call: HookCall) -> dict[str, Any]:
        return {
            **self._base_payload(event),
            "tool_name": call.tool_name,
            "tool_input": call.tool_input,
            "tool_use_id": call.tool_use_id,
        }

    def _select(self, event: HookEvent, target: str | None) -> list[HookCommand]:
        chosen: list[HookCommand] = []
        seen: set[str] = set()
        for entry in self._entries:
            if entry.event != event:
                continue
            if target is not None and not self._matcher(entry.matcher).matches(target):
                continue
            for hook in entry.hooks:
                if not self.trusted and hook.source in self._project_sources:
                    if not self._told_untrusted:
                        self._told_untrusted = True
                        self._pending.append(
                            "Hooks from the project's settings were skipped because this "
                            "project is not trusted (trust it when asked, or run with --trust)."
                        )
                    continue
                if hook.command not in seen:
                    seen.add(hook.command)
                    chosen.append(hook)
        return chosen

    def _matcher(self, pattern: str | None) -> _Matcher:
        known = self._matchers.get(pattern)
        if known is None:
            known = self._matchers[pattern] = _compile_matcher(pattern)
            if known.error:
                self._pending.append(known.error)
        return known

    async def _run(
        self, event: HookEvent, target: str | None, payload: dict[str, Any]
    ) -> tuple[list[_Ran], list[str]]:
        hooks = self._select(event, target)
        notes, self._pending = self._pending, []
        if not hooks:
            return [], notes
        payload["hook_event_name"] = event
        stdin = json.dumps(payload, default=_jsonable, ensure_ascii=False).encode()
        tool_name = payload.get("tool_name")
        is_mcp = isinstance(tool_name, str) and tool_name.startswith("mcp__")
        runs = await asyncio.gather(*(self._run_one(event, hook, stdin, is_mcp) for hook in hooks))
        return list(runs), notes

    async def _run_one(
        self, event: HookEvent, hook: HookCommand, stdin: bytes, is_mcp: bool
    ) -> _Ran:
        what = f"{event} {hook.describe()}"
        if hook.unreadable is not None:
            return _unguarded(event, hook, f"it has {hook.unreadable} proctor does not understand")
        pipes: dict[str, Any] = {
            "stdin": asyncio.subprocess.PIPE,
            "stdout": asyncio.subprocess.PIPE,
            "stderr": asyncio.subprocess.PIPE,
            "cwd": self.cwd,
            "env": self._env,
            "start_new_session": True,
        }
        if hook.args is not None:  # the exec form: the program and its words, no shell
            start = asyncio.create_subprocess_exec(hook.command, *hook.args, **pipes)
        else:
            start = asyncio.create_subprocess_shell(hook.command, **pipes)
        try:
            process = await start_whole(start, self._abandon)
        except OSError as error:
            return _unguarded(event, hook, f"it could not start: {error}")
        finished = False
        try:
            out, err = await asyncio.wait_for(process.communicate(stdin), hook.timeout_s)
            finished = True
        except TimeoutError:
            await self._stop(process)
            return _unguarded(event, hook, f"it timed out after {hook.timeout_s:g} s")
        finally:
            if not finished:  # timed out, cancelled or failed: nothing of the hook may linger
                await self._abandon(process)
        stdout = out.decode("utf-8", errors="replace")
        stderr = err.decode("utf-8", errors="replace").strip()
        return _interpret(event, hook, process.returncode, stdout, stderr, what, is_mcp)

    async def _abandon(self, process: asyncio.subprocess.Process) -> None:
        if process.returncode is None:
            _signal_group(process.pid, signal.SIGKILL)
            # Reap it now: the app exiting cancels us and then closes the loop,
            # which would leave a zombie and a warning behind.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), self.kill_grace_s)
        _close_pipes(process)
        await asyncio.sleep(0)  # lets the closed pipes release their fds

    async def _stop(self, process: asyncio.subprocess.Process) -> None:
        _signal_group(process.pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), self.kill_grace_s)
        # Always: a child that ignored SIGTERM may outlive the shell that started it.
        _signal_group(process.pid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), self.kill_grace_s)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _close_pipes(process: asyncio.subprocess.Process) -> None:
    # asyncio has no public way to drop an abandoned process's pipes; left open (a grandchild
    # outside the group may still hold them) they linger until garbage collection.
    transport = getattr(process, "_transport", None)
    if transport is not None:
        transport.close()


def _compile_matcher(pattern: str | None) -> _Matcher:
    if pattern is None or pattern.strip() in ("", "*"):
        return _Matcher(lambda _name: True)
    if _PLAIN_NAMES.fullmatch(pattern):
        names = frozenset(pattern.split("|"))
        return _Matcher(names.__contains__)
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        message = f"The hook matcher {pattern!r} is not a valid regular expression ({error}); "
        return _Matcher(lambda _name: False, message + "its hooks never run.")
    return _Matcher(lambda name: compiled.fullmatch(name) is not None)


def _jsonable(value: Any) -> Any:
    """Tool inputs and results as JSON, whatever they are made of."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


# --- reading one hook's answer -------------------------------------------------------------


def _interpret(
    event: HookEvent,
    hook: HookCommand,
    code: int | None,
    stdout: str,
    stderr: str,
    what: str,
    is_mcp: bool,
) -> _Ran:
    if code == 2:
        reason = stderr or f"blocked by {hook.describe()}"
        if event == "PreToolUse":
            return _Ran(hook, permission="deny", reason=reason)
        if event in ("PostToolUse", "PostToolUseFailure"):
            return _Ran(hook, additional_context=(reason,))
        if event in ("UserPromptSubmit", "Stop"):
            return _Ran(hook, blocked=True, reason=reason)
        return _Ran(hook, messages=(f"{what} exited with 2: {_shown(reason)}",))
    if code != 0:
        detail = f": {_shown(stderr)}" if stderr else ""
        return _Ran(hook, messages=(f"{what} failed (exit {code}){detail}",))
    text = stdout.strip()
    if not text.startswith("{"):
        if text and event in ("UserPromptSubmit", "SessionStart"):
            return _Ran(hook, additional_context=(text,))
        return _Ran(hook)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return _unguarded(event, hook, f"it printed output that is not valid JSON ({error})")
    try:
        return _read_output(event, hook, data, is_mcp)
    except _WrongShape as error:
        return _unguarded(event, hook, f"it printed JSON proctor cannot read ({error})")


def _read_output(event: HookEvent, hook: HookCommand, data: Any, is_mcp: bool) -> _Ran:
    if not isinstance(data, dict):
        raise _WrongShape("expected an object")
    keep_going = _get(data, "continue", bool)
    specific = _get(data, "hookSpecificOutput", dict) or {}
    message = _get(data, "systemMessage", str)
    context = _get(specific, "additionalContext", str)
    legacy = _get(data, "decision", str)
    legacy_reason = _get(data, "reason", str)
    if legacy not in (None, "approve", "block"):
        raise _WrongShape(f'decision must be "approve" or "block", not {legacy!r}')
    ran = _Ran(
        hook,
        messages=(message,) if message else (),
        additional_context=(context,) if context else (),
        prevent_continuation=keep_going is False,
        stop_reason=_get(data, "stopReason", str),
    )
    if event == "PreToolUse":
        said = _get(specific, "permissionDecision", str)
        permission: HookPermission | None
        if said is not None and said in _PERMISSIONS:
            permission = _PERMISSIONS[said]
        elif said is not None:
            raise _WrongShape(f"permissionDecision must be allow, deny or ask, not {said!r}")
        elif legacy is not None:
            permission = "allow" if legacy == "approve" else "deny"
        else:
            permission = None
        reason = _get(specific, "permissionDecisionReason", str) or legacy_reason
        updated = _get(specific, "updatedInput", dict)
        return dataclasses.replace(ran, permission=permission, reason=reason, updated_input=updated)
    if legacy == "block":
        reason = legacy_reason or f"blocked by {hook.describe()}"
        if event in ("UserPromptSubmit", "Stop"):
            return dataclasses.replace(ran, blocked=True, reason=reason)
        if event in ("PostToolUse", "PostToolUseFailure"):
            return dataclasses.replace(ran, additional_context=(*ran.additional_context, reason))
    if event == "PostToolUse" and is_mcp and "updatedMCPToolOutput" in specific:
        return dataclasses.replace(ran, updated_output=specific["updatedMCPToolOutput"])
    return ran


def _get(data: Mapping[str, Any], key: str, kind: type[_T]) -> _T | None:
    value = data.get(key)
    if value is None or isinstance(value, kind):
        return value
    raise _WrongShape(f"{key} must be {kind.__name__}, not {type(value).__name__}")


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + " …"


# --- combining several hooks -------------------------------------------------------------


def _common(runs: list[_Ran], notes: list[str]) -> dict[str, Any]:
    stop_reasons = [run.stop_reason for run in runs if run.prevent_continuation and run.stop_reason]
    return {
        "additional_context": tuple(c for run in runs for c in run.additional_context),
        "messages": (*notes, *(m for run in runs for m in run.messages)),
        "prevent_continuation": any(run.prevent_continuation for run in runs),
        "stop_reason": "\n".join(stop_reasons) or None,
    }


def _unguarded(event: HookEvent, hook: HookCommand, why: str) -> _Ran:
    """A hook that could not do its job. A PreToolUse hook guards calls, so the call asks
    rather than run unguarded; for other events the user is told and work goes on."""
    message = f"{event} {hook.describe()} did not run as configured: {why}."
    if event != "PreToolUse":
        return _Ran(hook, messages=(message,))
    reason = f"{message} The call asks instead of running unguarded."
    return _Ran(hook, permission="ask", reason=reason, messages=(message,))


def _combine_pre(runs: list[_Ran], notes: list[str]) -> PreToolUseOutcome:
    if not runs and not notes:
        return NO_PRE_OUTCOME
    winner = max((run.permission for run in runs), key=_RANK.__getitem__, default=None)
    deciders = [run for run in runs if winner and run.permission == winner]
    updated = None
    if winner != "deny":
        for run in runs:
            if run.permission in ("allow", "ask") and run.updated_input is not None:
                updated = run.updated_input
    return PreToolUseOutcome(
        permission=winner,
        reason="\n".join(run.reason for run in deciders if run.reason) or None,
        source="; ".join(run.hook.describe() for run in deciders) or "hook",
        updated_input=updated,
        **_common(runs, notes),
    )


def _combine_post(runs: list[_Ran], notes: list[str]) -> PostToolUseOutcome:
    if not runs and not notes:
        return NO_POST_OUTCOME
    outputs = [run.updated_output for run in runs if run.updated_output is not None]
    return PostToolUseOutcome(
        updated_output=outputs[-1] if outputs else None, **_common(runs, notes)
    )


def _combine_event(runs: list[_Ran], notes: list[str]) -> EventHookOutcome:
    if not runs and not notes:
        return NO_EVENT_OUTCOME
    blockers = [run for run in runs if run.blocked]
    return EventHookOutcome(
        blocked=bool(blockers),
        reason="\n".join(run.reason for run in blockers if run.reason) or None,
        **_common(runs, notes),
    )
