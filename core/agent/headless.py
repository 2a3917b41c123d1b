"""Headless runs (`proctor -p "prompt"`): the whole engine, no screen, nobody to ask.

A headless session is assembled exactly like an interactive one (settings, trust, the
permission context, hooks, the audit log, the transcript, the tool pool) with two
differences: no port answers questions, so a call that would ask is refused with a message to
the model (unless the mode and rules allow it), and what happens is printed as text, one JSON
document, or JSON lines (`stream-json`) for scripts.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from .. import __version__
from ..app_state import AppState, AppStateStore
from ..events import EngineEvent, ToolCancelled, ToolCompleted, ToolEvent, ToolQueued
from ..executor import ExecutorServices
from ..hook_runner import CommandHookRunner
from ..permissions.audit import AuditLog
from ..permissions.context import PermissionMode
from ..permissions.decide import DecisionChain
from ..permissions.setup import permission_context_from
from ..registry import assemble_tool_pool
from ..results import ResultStore
from ..settings import load_settings
from ..tool import ToolContext, ToolOptions
from ..tools.task import AGENTS, AgentRuntime, register_runtime, unregister_runtime
from ..trust import is_trusted
from .loop import AgentLoop, AssistantMessage, TextDelta, TurnEnded, TurnError, UserMessage
from .model import MissingApiKey, ModelClient
from .sessions import (
    Session,
    SessionNotFound,
    create_session,
    find_session,
    latest_session,
    set_title,
)
from .transcript import event_record, messages_from

OutputFormat = Literal["text", "json", "stream-json"]


@dataclass(frozen=True, slots=True)
class HeadlessOptions:
    prompt: str | None
    cwd: Path
    output_format: OutputFormat = "text"
    demo: bool = False
    scenario: str | None = None
    model: str | None = None
    mode: PermissionMode | None = None
    allow_bypass: bool = False
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    ask: Sequence[str] = ()
    max_turns: int = 100
    trust: bool = False
    demo_speed: float = 1.0
    resume: str | None = None
    """A session id (or a unique prefix) of this project to carry on."""
    continue_latest: bool = False
    """Carry on the project's most recently active session."""


@dataclass
class _Printer:
    """The sink: prints as the chosen format wants, and keeps what the summary needs."""

    out: TextIO
    output_format: OutputFormat
    text: list[str] = field(default_factory=list)
    final: str = ""
    """The text of the last assistant message: the run's answer."""
    summaries: dict[str, str] = field(default_factory=dict)

    def __call__(self, event: EngineEvent) -> None:
        if isinstance(event, TextDelta):
            self.text.append(event.text)
        elif isinstance(event, AssistantMessage):
            self.final = "".join(
                str(b.get("text", "")) for b in event.content if b.get("type") == "text"
            )
        if self.output_format == "stream-json":
            if isinstance(event, ToolEvent) and event.kind == "progress":
                self._line(event_record(event))
            elif isinstance(event, AssistantMessage | UserMessage):
                role = "assistant" if isinstance(event, AssistantMessage) else "user"
                self._line(
                    {"type": role, "message": {"role": role, "content": list(event.content)}}
                )
            elif not isinstance(event, TextDelta):
                self._line(event_record(event))
        elif isinstance(event, TextDelta):
            if self.output_format == "text":
                self.out.write(event.text)
                self.out.flush()
        elif self.output_format == "text":
            self._narrate(event)

    def _narrate(self, event: EngineEvent) -> None:
        """Text mode: the assistant's words on stdout, one line per finished call on stderr."""
        if isinstance(event, AssistantMessage) and self.text and not self.text[-1].endswith("\n"):
            self.out.write("\n")
            self.text.append("\n")
        elif isinstance(event, TurnError):
            print(f"proctor: {event.message}", file=sys.stderr)
        elif isinstance(event, ToolQueued):
            self.summaries[event.tool_use_id] = f"{event.tool_name}({event.summary})"
        elif isinstance(event, ToolCompleted | ToolCancelled):
            call = self.summaries.get(event.tool_use_id, event.tool_name)
            if isinstance(event, ToolCancelled):
                state = f"cancelled: {event.reason}"
            else:
                state = f"failed at {event.failed_stage}" if event.is_error else "done"
            print(f"  {call} — {state}", file=sys.stderr)

    def _line(self, record: dict[str, Any]) -> None:
        self.out.write(json.dumps(record, default=str) + "\n")
        self.out.flush()


async def run_headless(options: HeadlessOptions, out: TextIO = sys.stdout) -> int:
    """Run one prompt to the end. Exit status: 0 done, 1 the turn failed or no key."""
    scenario = None
    cwd = options.cwd.resolve()
    if options.demo:
        from .demo import demo_workspace
        from .scenario import load_scenario

        scenario = load_scenario(options.scenario or "default")
        cwd = demo_workspace(scenario)
        if scenario.workspace != "cwd":
            print(
                f"proctor: the demo works on a scratch copy of the sample project: {cwd}",
                file=sys.stderr,
            )
    prompt = options.prompt or (scenario.prompt if scenario else None)
    if not prompt:
        print("proctor: give a prompt with -p", file=sys.stderr)
        return 2

    settings = load_settings(cwd, allow=options.allow, deny=options.deny, ask=options.ask)
    for problem in settings.problems:
        print(f"proctor: {problem}", file=sys.stderr)
    trusted = options.trust or is_trusted(cwd)
    try:
        session, history = _session_for(options, cwd, prompt)
    except SessionNotFound as error:
        print(f"proctor: {error}", file=sys.stderr)
        return 2
    permissions, notes = permission_context_from(
        settings,
        mode=options.mode,
        allow_bypass=options.allow_bypass,
        trusted=trusted,
        avoid_prompts=True,
        plan_file=session.plan_path,
    )
    for note in notes:
        print(f"proctor: {note}", file=sys.stderr)

    try:
        if scenario is not None:
            from .demo import DEMO_MODEL, DemoModel

            demo = DemoModel(
                scenario, workspace=cwd, plan_file=session.plan_path, speed=options.demo_speed
            )
            model = ModelClient(demo.client(max_retries=0), model=DEMO_MODEL)
        else:
            model = ModelClient.from_env(options.model or settings.model)
    except MissingApiKey as error:
        print(f"proctor: {error}", file=sys.stderr)
        return 1

    printer = _Printer(out, options.output_format)
    store = AppStateStore(AppState(permission_context=permissions))
    hooks = (
        CommandHookRunner(
            settings.hooks,
            session_id=session.id,
            transcript_path=session.transcript_path,
            cwd=cwd,
            permission_mode=lambda: store.get().permission_context.mode,
            trusted=trusted,
        )
        if settings.hooks
        else None
    )
    audit = AuditLog(session.audit_path)
    services = ExecutorServices(
        sink=printer,
        permissions=DecisionChain(audit=audit),
        hooks=hooks,
        results=ResultStore(session.directory),
    )
    tools = assemble_tool_pool(permissions)
    context = ToolContext(
        cwd=cwd,
        app_state=store,
        options=ToolOptions(
            tools=tools, model=model.model, session_dir=session.directory, events=printer
        ),
    )
    if options.output_format == "stream-json":
        printer._line(
            {
                "type": "system",
                "subtype": "init",
                "session_id": session.id,
                "cwd": str(cwd),
                "tools": list(tools.names),
                "mode": permissions.mode,
                "model": model.model,
                "version": __version__,
            }
        )
    transcript = session.transcript()
    started_context = ""
    if hooks is not None:
        source = "resume" if (options.resume or options.continue_latest) else "startup"
        began = await hooks.run_event("SessionStart", {"source": source})
        for message in began.messages:
            print(f"proctor: {message}", file=sys.stderr)
        started_context = "\n".join(began.additional_context)
    loop = AgentLoop(
        model,
        services,
        context,
        extra_prompt=started_context,
        messages=history,
        transcript=transcript,
        max_turns=options.max_turns,
    )
    register_runtime(store, AgentRuntime(model, services))
    started = time.monotonic()
    try:
        ended: TurnEnded = await loop.send(prompt)
    finally:
        from ..tools.shells import SHELLS

        await AGENTS.close(store)
        unregister_runtime(store)
        await SHELLS.close_all()
        audit.close()
        transcript.close()
    failed = ended.stop_reason in ("error", "interrupted")
    summary = {
        "type": "result",
        "session_id": session.id,
        "is_error": failed,
        "stop_reason": ended.stop_reason,
        "num_turns": ended.requests,
        "duration_s": round(time.monotonic() - started, 3),
        "usage": ended.usage,
        "result": printer.final,
    }
    if options.output_format == "text":
        out.write("\n")
    else:
        printer._line(summary)
    return 1 if failed else 0


def _session_for(
    options: HeadlessOptions, cwd: Path, prompt: str
) -> tuple[Session, list[dict[str, Any]]]:
    """A new session, or an earlier one to carry on with its conversation rebuilt (a session
    cut short by a crash included: its unfinished calls get results saying so)."""
    if options.resume:
        session = find_session(cwd, options.resume)
    elif options.continue_latest:
        latest = latest_session(cwd)
        if latest is None:
            raise SessionNotFound(f"there is no earlier session for {cwd} to continue")
        session = latest
    else:
        session = create_session(cwd, model=options.model or "")
        set_title(session, prompt)
        return session, []
    transcript = session.transcript()
    try:
        history = messages_from(transcript.records())
    finally:
        transcript.close()
    return session, history
