"""One running session, assembled the same way for every front end.

A session is more than a loop: settings read from every source, the trust decision, the
permission context, hooks, the audit log, the transcript, the tool pool, the Task runtime
and the shells it starts. The headless runner and the TUI differ only in who answers (the
ports), where events go (the sink) and whether asking is possible at all, so both build a
`LiveSession` from `SessionOptions` and talk to it; nothing about assembling or closing a
session is written twice.

Building happens in two steps because the TUI must ask about trust between them: first
`prepare_session` (settings, the demo workspace, the session on disk), then `open_session`
with the front end's sink and ports. `close()` stops everything the session started.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from .. import __version__
from ..access.context import PermissionMode
from ..access.modes import DEFAULT_CYCLE, cycle_mode, switch_mode
from ..app_state import AppState, AppStateStore
from ..events import (
    CommandPrepared,
    EventSink,
    HookRan,
    ModeChanged,
    ModeChanger,
    TodosChanged,
)
from ..executor import ExecutorServices
from ..executor.waiting import WaitingAsks, redeciding_on_mode_change
from ..hook_runner import CommandHookRunner
from ..hooks import NO_EVENT_OUTCOME
from ..mcp.servers import MCP, McpServers
from ..permissions.audit import AuditLog, auditing
from ..permissions.decide import DecisionChain
from ..permissions.session_sandbox import SANDBOX, SessionSandbox, program_files
from ..permissions.setup import permission_context_from
from ..ports import PermissionPort, UserPort
from ..registry import assemble_tool_pool, known_tool_names
from ..results import ContentReplacementState, ResultStore
from ..session_services import SessionServices
from ..settings import sandbox as sandbox_config
from ..settings.read import load_settings, require_settings_file
from ..settings.values import PROJECT_SOURCES, Settings
from ..tool import ToolContext, ToolOptions, ToolPool
from ..tools.skill import SKILLS
from ..tools.skill_files import SkillCatalog
from ..tools.task import SUBAGENTS
from ..tools.todo_write import Todo
from ..trust import is_trusted
from . import demo_workspace
from .compaction import context_window, threshold_of
from .compactor import Compactor
from .demo_workspace import ScratchWorkspace, demo_place, discard, sample_dir
from .events import RecordNotWritten
from .git_facts import GitFacts, GitFactsOnTheWay, facts_from_files, sandboxed_git_facts
from .instruction_access import Refusal, admitted, instruction_refusal
from .instructions import Instructions, InstructionSet, load_instructions
from .loop import AgentLoop, TurnEnded
from .model import DEFAULT_MODEL, ModelClient, limits_for, thinking_env
from .options import SessionOptions as SessionOptions  # re-exported: callers build both here
from .prompt import Environment
from .sessions import (
    Session,
    SessionNotFound,
    create_session,
    find_session,
    latest_session,
    read_meta,
    set_title,
)
from .skills import project_skill_files, session_skills
from .subagents import SessionSubAgents
from .transcript import Transcript, transcribing
from .transcript_records import clear_record, end_record, start_record
from .transcript_replay import Past, past_events
from .transcript_resume import RestoredState, messages_from, restored_state

if TYPE_CHECKING:
    from ..abort import AbortController
    from .commands import CommandPrompt
    from .scenario import Scenario


@dataclass(slots=True)
class PreparedSession:
    """Everything known before the front end decides about trust."""

    options: SessionOptions
    cwd: Path
    """Where the agent works: the project, or the demo's scratch copy of the sample."""
    settings: Settings
    session: Session
    history: list[dict[str, Any]]
    scenario: Scenario | None
    previously_trusted: bool
    notes: list[str] = field(default_factory=list)
    """What the user should be told before anything runs (settings problems, the demo's
    workspace); `open_session` adds what it sets aside."""
    restored: RestoredState = field(default_factory=RestoredState)
    """What a resumed session had when it stopped: its mode and its todo list."""
    past: Past = field(default_factory=Past)
    """A resumed session's earlier turns as events, for the front end to draw first."""
    resumed: bool = False
    """Carrying on an earlier session (a demo whose workspace is gone starts afresh)."""
    scratch: ScratchWorkspace | None = None
    """The demo's scratch workspace, when the agent works in one."""
    instructions: Instructions = field(default_factory=Instructions)
    """CLAUDE.md, AGENTS.md and the like found at start; the project's are used only once
    it is trusted (the trust dialog lists them)."""


def prepare_session(options: SessionOptions) -> PreparedSession:
    """Read settings and find or create the session; raises SessionNotFound, ScenarioError,
    SettingsFileError (a `--settings` file that cannot be read).

    A demo on the sample project keeps its sessions under the sample (not under each
    scratch copy), each recording its copy, so `--demo --continue` finds the last one and
    carries on in the same copy, if that is still there."""
    if options.settings_file is not None:
        require_settings_file(options.settings_file)
    cwd = options.cwd.resolve()
    scenario = None
    notes: list[str] = []
    if options.demo:
        from .scenario import load_scenario

        scenario = load_scenario(options.scenario or "default")
    on_sample = scenario is not None and scenario.workspace != "cwd"
    group = sample_dir() if on_sample else cwd
    earlier = _earlier_session(options, group, demo=on_sample)
    scratch = None
    if scenario is not None and on_sample:
        place = demo_place(scenario, earlier, options)
        scratch, earlier = place.scratch, place.earlier
        notes += place.notes
        cwd = scratch.path
    try:
        settings = load_settings(
            cwd,
            allow=options.allow,
            deny=options.deny,
            ask=options.ask,
            settings_file=options.settings_file,
            tool_names=known_tool_names(),
        )
        if earlier is None:
            session = create_session(
                group, model=options.model or "", workspace=cwd if on_sample else None
            )
            history: list[dict[str, Any]] = []
            restored, past = RestoredState(), Past()
        else:
            session = earlier
            history, restored, past = _read_back(earlier)
    except BaseException:
        discard(scratch)  # no session will use it
        raise
    notes += [str(problem) for problem in settings.problems]
    thinking_problem = thinking_env().problem
    if thinking_problem is not None:
        notes.append(thinking_problem)
    return PreparedSession(
        options=options,
        cwd=cwd,
        settings=settings,
        session=session,
        history=history,
        scenario=scenario,
        # The demo's scratch copy of proctor's own sample is trusted as shipped (its MCP
        # server starts); a scenario run in the user's directory asks like any session.
        previously_trusted=is_trusted(cwd) or on_sample,
        notes=notes,
        restored=restored,
        past=past,
        resumed=earlier is not None,
        scratch=scratch,
        instructions=load_instructions(cwd, user=settings.read_claude),
    )


def end_workspace(prepared: PreparedSession) -> str | None:
    """Remove the demo's scratch copy unless it is kept; says which (demo_workspace.py)."""
    return demo_workspace.end_workspace(prepared.scratch)


@dataclass(slots=True)
class LiveSession:
    prepared: PreparedSession
    model: ModelClient
    store: AppStateStore
    services: ExecutorServices
    context: ToolContext
    loop: AgentLoop
    audit: AuditLog
    transcript: Transcript
    hooks: CommandHookRunner | None
    mode_cycle: tuple[PermissionMode, ...]
    notes: list[str]
    sandbox: SessionSandbox
    built_ins: ToolPool = field(default_factory=ToolPool)
    """The pool before MCP servers' tools are added (`mcp.extend`)."""
    trusted: bool = True
    """Whether the project's own settings apply (the status screen says which are set aside)."""
    directory_trusted: bool = False
    """The person trusted the project's directory: its commands' allowed-tools may grant
    their own !`cmd` lines (command_prepare.py)."""
    _preparing: AbortController | None = None
    _closed: bool = False

    @property
    def session(self) -> Session:
        return self.prepared.session

    @property
    def cwd(self) -> Path:
        return self.prepared.cwd

    @property
    def instructions(self) -> InstructionSet | None:
        """What instructions were loaded and from where (`.loaded()`): for `/memory`."""
        return self.loop.instructions

    @property
    def tool_names(self) -> tuple[str, ...]:
        tools = self.loop.context.options.tools
        return tuple(tools.names) if tools is not None else ()

    @property
    def mcp(self) -> McpServers | None:
        return self.context.options.services.get(MCP)

    @property
    def skills(self) -> SkillCatalog:
        """The skills the session offers (a project's only when trusted)."""
        return self.context.options.services.get(SKILLS) or SkillCatalog()

    @property
    def mode(self) -> PermissionMode:
        return self.store.get().permission_context.mode

    async def send(self, prompt: str) -> TurnEnded:
        """One turn. A slash command's prompt (`CommandPrompt`) may ask for another model
        for this turn only, and narrow it to its allowed-tools (the loop ends such scopes
        when the turn ends)."""
        typed = getattr(prompt, "typed", None)  # a command's line (`CommandPrompt`)
        if not read_meta(self.session).title:
            set_title(self.session, typed or prompt)
        await self.offer_mcp_tools()
        if type(prompt) is str:  # a plain prompt: the commands' module loads only for theirs
            return await self.loop.send(prompt)
        from ..tools.skill import end_skills
        from .command_parts import needs_preparing
        from .commands import CommandPrompt, narrowed

        if not isinstance(prompt, CommandPrompt):
            return await self.loop.send(prompt)
        # The transcript keeps the line typed beside its expansion (for a resumed session).
        typed = prompt.typed if prompt.typed != str(prompt) else None
        narrowing = prompt.narrowing
        if narrowing is not None:
            self.store.set(lambda state: narrowed(state, narrowing))
        text: str = prompt
        if prompt.command is not None and needs_preparing(prompt.parts):
            prepared = await self._prepared(prompt)
            if prepared is None:  # esc while its lines ran: the turn ends unsent
                self.store.set(end_skills)
                ended = TurnEnded(stop_reason="interrupted", requests=0, usage={})
                self.services.emit(ended)
                return ended
            text = prepared
            self.services.emit(CommandPrepared(text=prepared))
        if not prompt.model:
            return await self.loop.send(text, typed=typed)
        client, compactor = self.model, self.loop.compactor
        before = (client.model, client.max_tokens, client.thinking)
        window = compactor.window
        client.use_model(prompt.model)
        compactor.window = context_window(prompt.model)  # the gauge and compaction follow it
        try:
            return await self.loop.send(text, typed=typed)
        finally:
            client.model, client.max_tokens, client.thinking = before
            compactor.window = window

    async def _prepared(self, prompt: CommandPrompt) -> str | None:
        """The command's `@path` files read and !`cmd` lines run (command_prepare.py); None
        when esc stopped them. Its narrowing is already on; should this fail, it ends here,
        not with a turn never run."""
        from ..abort import AbortController
        from ..tools.skill import end_skills
        from .command_prepare import CommandSession, prepared_prompt

        abort = self._preparing = AbortController()
        session = CommandSession(
            self.cwd, self.services, lambda: self.loop.context, self.directory_trusted, abort.signal
        )
        try:
            return await prepared_prompt(prompt, session)
        except BaseException:
            self.store.set(end_skills)
            raise
        finally:
            self._preparing = None

    async def compact(self, instructions: str = "") -> bool:
        """`/compact [instructions]`: the conversation replaced by a summary, between turns."""
        return await self.loop.compact(instructions)

    def use_model(self, model: str) -> None:
        """`/model NAME`: from the next request on, with its budget, thinking and window."""
        self.model.use_model(model)
        self.loop.compactor.window = context_window(model)

    async def offer_mcp_tools(self) -> None:
        """The pool with the MCP servers' tools, once every server has started or failed
        (each within its timeout; they started when the session opened)."""
        servers = self.mcp
        if servers is None or not servers.connections:
            return
        permissions = self.store.get().permission_context
        self.loop.use_tools(await servers.extend(self.built_ins, permissions))

    @property
    def running(self) -> bool:
        """A turn runs, or a command's !`cmd` lines run before it (esc stops either)."""
        return self._preparing is not None or self.loop.running

    def interrupt(self) -> None:
        if self._preparing is not None:  # a command's !`cmd` lines, before its turn
            self._preparing.abort("interrupt")
        self.loop.interrupt()

    def clear_conversation(self) -> None:
        """`/clear`: the model starts afresh in the same session (its folder, transcript,
        shells, mode and todos stay). The transcript keeps what came before and marks the
        point, so a resumed session starts from the mark too."""
        if self.loop.running:
            raise RuntimeError("a turn is running; interrupt it or wait")
        self.loop.messages.clear()
        self.loop.replacements = ContentReplacementState()
        self.loop.compactor.restart(self.loop)
        self.transcript.append(clear_record())
        self.transcript.sync()

    def cycle_mode(self) -> PermissionMode:
        """The mode key: the next mode of the cycle, in force for the very next decision."""
        return self._change_mode(lambda context: cycle_mode(context, self.mode_cycle), "key")

    def set_mode(self, mode: PermissionMode, by: ModeChanger = "palette") -> PermissionMode:
        """The person chose `mode` (`by`: where, for the audit log)."""
        return self._change_mode(lambda context: switch_mode(context, mode), by)

    def _change_mode(self, change: Callable[[Any], Any], by: ModeChanger) -> PermissionMode:
        before = self.store.get().permission_context
        after = self.store.set(
            lambda state: state.with_permission_context(change(state.permission_context))
        ).permission_context
        if after.mode != before.mode:
            why = "the mode key" if by == "key" else "the user chose it"
            self.loop.services.emit(
                ModeChanged(mode=after.mode, previous=before.mode, why=why, by=by)
            )
        return after.mode

    async def close(self, reason: str = "quit") -> None:
        """Stop what the session started; `reason` marks the transcript's clean end."""
        if self._closed:
            return
        self._closed = True
        try:
            # This session's sub-agents, shells and sandbox; other sessions' carry on.
            await self.context.options.services.close()
        finally:
            self.audit.close()
            self.transcript.append(end_record(reason))
            self.transcript.close()


async def open_session(
    prepared: PreparedSession,
    *,
    sink: EventSink,
    trusted: bool,
    permission_port: PermissionPort | None = None,
    user_port: UserPort | None = None,
    remember: Callable[[str], Path] | None = None,
    model: ModelClient | None = None,
    project_trusted: bool | None = None,
) -> LiveSession:
    """Assemble the session and run its SessionStart hooks; raises MissingApiKey.

    `trusted` says whether the project's own settings apply; a front end may pass it for a
    project that has none (nothing to ask about). `project_trusted` says whether the person
    trusted the directory itself (`--trust`, the trust store, the demo's scratch copy; None:
    the last two), which the user's MCP servers need to start in it.

    Without a permission port nobody can answer, so calls that would ask are refused (the
    headless case). `remember` keeps an "always allow" rule (the local settings file).
    """
    options = prepared.options
    session = prepared.session
    settings = prepared.settings
    protected = program_files(settings, prepared.cwd)
    permissions, set_aside = permission_context_from(
        settings,
        mode=options.mode,
        resumed_mode=_known_mode(prepared.restored.mode),
        allow_bypass=options.allow_bypass,
        trusted=trusted,
        avoid_prompts=permission_port is None,
        plan_file=session.plan_path,
        protected_files=protected,
    )
    sandbox_settings, sandbox_notes = sandbox_config.merge(
        settings.sandbox_layers, trusted=trusted, project_sources=PROJECT_SOURCES
    )
    sandbox = SessionSandbox(
        sandbox_settings,
        project=prepared.cwd,
        session_dir=session.directory,
        protected_files=protected,
    )
    # On a thread; the first command's decision waits for it. Started before the model
    # client: its fork and exec overlap the SDK's import.
    sandbox.start_probe()
    if model is None:
        model = _model_for(prepared)
    git: GitFacts | GitFactsOnTheWay
    if permission_port is None:
        # A headless run sends its first request at once: git (its fence built, its
        # process forked) would hold the interpreter just then, for a status a script's
        # checkout rarely needs. What `.git` says costs nothing.
        git = facts_from_files(prepared.cwd, "not read in a headless run")
    else:
        # After the SDK's import, not beside it (building the fence and forking git hold
        # the interpreter, which would slow the import), and no request waits for it.
        reading = asyncio.get_running_loop().run_in_executor(
            None, sandboxed_git_facts, prepared.cwd, sandbox, permissions
        )
        git = GitFactsOnTheWay(reading, prepared.cwd)
    todos = tuple(_todo(item) for item in prepared.restored.todos)
    store = AppStateStore(AppState(permission_context=permissions, todos=todos))
    hooks = (
        CommandHookRunner(
            settings.hooks,
            session_id=session.id,
            transcript_path=session.transcript_path,
            cwd=prepared.cwd,
            permission_mode=lambda: store.get().permission_context.mode,
            trusted=trusted,
        )
        if settings.hooks
        else None
    )
    audit = AuditLog(session.audit_path)  # told where to report a failure once `events` is
    session_services = SessionServices()
    session_services.provide(SANDBOX, sandbox)
    # The person trusted the directory itself, not only "its settings apply" (which a front
    # end also says of a project with nothing to ask about).
    directory_trusted = trusted and (
        project_trusted
        if project_trusted is not None
        else prepared.previously_trusted or is_trusted(prepared.cwd)
    )
    skills = session_skills(
        prepared.cwd, project=directory_trusted, claude_user=settings.read_claude
    )
    session_services.provide(SKILLS, skills)
    transcript = session.transcript()
    transcript.append(
        start_record(resumed=prepared.resumed, version=__version__, model=model.model)
    )
    # One sink for the whole session: whatever emits (the loop, the executor, tools,
    # sub-agents) is written to the transcript on its way to the front end. A change of
    # mode also decides again the calls waiting for an answer.
    waiting = WaitingAsks()
    events = redeciding_on_mode_change(auditing(audit, transcribing(transcript, sink)), waiting)
    audit.on_error = lambda reason: events(RecordNotWritten(record="audit log", reason=reason))
    transcript.on_error = lambda reason: sink(RecordNotWritten(record="transcript", reason=reason))
    services = ExecutorServices(
        waiting=waiting,
        sink=events,
        permissions=DecisionChain(audit=audit, remember=remember, sandbox=sandbox),
        hooks=hooks,
        permission_port=permission_port,
        results=ResultStore(session.directory),
    )
    built_ins = assemble_tool_pool(permissions)
    mcp = McpServers(
        settings.mcp_servers,
        cwd=prepared.cwd,
        log_dir=session.directory / "mcp",
        emit=events,
        trusted=trusted,
        project_sources=PROJECT_SOURCES,
        project_trusted=directory_trusted,
    )
    session_services.provide(MCP, mcp)
    mcp.start()  # each server in its own task; the first prompt waits for them
    context = ToolContext(
        cwd=prepared.cwd,
        app_state=store,
        options=ToolOptions(
            tools=built_ins,
            model=model.model,
            session_dir=session.directory,
            user_port=user_port,
            events=events,
            services=session_services,
        ),
    )
    notes = [*set_aside, *sandbox_notes, *(str(problem) for problem in skills.problems)]
    if mcp.untrusted:
        names = ", ".join(config.name for config in mcp.untrusted)
        notes.append(f"the project's MCP servers ({names}) do not start: it is not trusted")
    started_context = ""
    if hooks is not None:
        began = await hooks.run_event(
            "SessionStart", {"source": "resume" if prepared.resumed else "startup"}
        )
        notes += began.messages
        started_context = "\n".join(began.additional_context)
        if began != NO_EVENT_OUTCOME:
            events(HookRan(hook_event="SessionStart", outcome=began))
    if not directory_trusted and (left_out := project_skill_files(prepared.cwd)):
        names = ", ".join(path.parent.name for path in left_out)
        notes.append(f"the project's skills ({names}) are not offered: it is not trusted")
    instructions, instruction_notes = _instructions_for(
        prepared,
        trusted=trusted,
        follow_subdirectories=directory_trusted,
        refusal=instruction_refusal(prepared.cwd, lambda: store.get().permission_context),
    )
    notes += instruction_notes
    loop = AgentLoop(
        model,
        services,
        context,
        environment=Environment(cwd=prepared.cwd, git=git),
        instructions=instructions,
        extra_prompt="\n\n".join(
            part for part in (instructions.start.prompt_text(), started_context) if part
        ),
        messages=prepared.history,
        transcript=transcript,
        max_turns=options.max_turns,
        compactor=_compactor_for(prepared, model),
    )
    session_services.provide(
        SUBAGENTS, SessionSubAgents(model, services, instructions=instructions)
    )
    if todos:
        events(TodosChanged(todos=todos))  # a resumed list: the front end shows it again
    if prepared.resumed and prepared.restored.context_tokens is not None:
        loop.compactor.resume(loop, prepared.restored.context_tokens)  # the gauge, at once
    return LiveSession(
        prepared=prepared,
        model=model,
        store=store,
        services=loop.services,
        context=context,
        loop=loop,
        audit=audit,
        transcript=transcript,
        hooks=hooks,
        mode_cycle=settings.mode_cycle or DEFAULT_CYCLE,
        notes=notes,
        sandbox=sandbox,
        built_ins=built_ins,
        trusted=trusted,
        directory_trusted=directory_trusted,
    )


def _instructions_for(
    prepared: PreparedSession,
    *,
    trusted: bool,
    follow_subdirectories: bool | None = None,
    refusal: Refusal | None = None,
) -> tuple[InstructionSet, list[str]]:
    """The instructions the session uses, and what to tell the person about them.

    Subdirectories' files are found only in a directory the person trusted: they are never
    in the trust dialog (found later, as files are read), so a project whose only
    instructions sit in `src/CLAUDE.md` would otherwise steer the model unasked."""
    found = prepared.instructions
    used = found if trusted else found.user_only()
    if refusal is not None:
        used = admitted(used, refusal)
    notes = [f"instructions: {problem}" for problem in used.problems]
    if not trusted and found.project_files:
        names = ", ".join(str(f.path) for f in found.project_files)
        notes.append(f"the project's instructions ({names}) are not used: it is not trusted")
    instructions = InstructionSet(
        prepared.cwd,
        used,
        follow_subdirectories=trusted if follow_subdirectories is None else follow_subdirectories,
        history=prepared.history,
        refusal=refusal,
    )
    return instructions, notes


def _model_for(prepared: PreparedSession) -> ModelClient:
    if prepared.scenario is not None:
        from .demo import DEMO_MODEL, DemoModel

        demo = DemoModel(
            prepared.scenario,
            workspace=prepared.cwd,
            plan_file=prepared.session.plan_path,
            speed=prepared.options.demo_speed,
        )
        # Asked for as the default model is (adaptive thinking, its output budget), so the
        # demo streams thinking and the request is the one a real session sends.
        limits = limits_for(DEFAULT_MODEL)
        said = thinking_env()
        turned_off = prepared.settings.thinking is False or said.off
        return ModelClient(
            demo.client(max_retries=0),
            model=DEMO_MODEL,
            max_tokens=limits.max_tokens,
            thinking="off" if turned_off else limits.thinking,
            thinking_budget=said.budget,
        )
    return ModelClient.from_env(
        prepared.options.model,
        settings_model=prepared.settings.model,
        thinking="off" if prepared.settings.thinking is False else None,
    )


def _compactor_for(prepared: PreparedSession, model: ModelClient) -> Compactor:
    """The model's window (a demo scenario may make it smaller) and the settings' threshold."""
    override = prepared.scenario.context_window if prepared.scenario is not None else None
    window = context_window(model.model, override=override)
    return Compactor(window, threshold_of(prepared.settings.auto_compact))


def _known_mode(mode: str | None) -> PermissionMode | None:
    modes: tuple[PermissionMode, ...] = get_args(PermissionMode)
    return next((known for known in modes if known == mode), None)


def _todo(item: Mapping[str, Any]) -> Todo:
    return Todo(str(item["content"]), item["status"], str(item["active_form"]))


def _earlier_session(options: SessionOptions, group: Path, *, demo: bool) -> Session | None:
    """The session `--resume` or `--continue` names, or None for a new one."""
    if options.resume:
        try:
            return find_session(group, options.resume)
        except SessionNotFound as error:
            if not demo:
                raise
            # Demo sessions are kept under the sample project; say "the demo", not its path.
            said = str(error).replace(f"for {group}", "of the demo")
            raise SessionNotFound(said, error.candidates) from None
    if options.continue_latest:
        latest = latest_session(group)
        if latest is None:
            what = "demo session" if demo else f"session for {group}"
            raise SessionNotFound(f"there is no earlier {what} to continue")
        return latest
    return None


def _read_back(session: Session) -> tuple[list[dict[str, Any]], RestoredState, Past]:
    """An earlier session's conversation rebuilt (a session cut short by a crash included:
    its unfinished calls get results saying so), its mode and todo list, and its past to
    draw."""
    transcript = session.transcript()
    try:
        records = list(transcript.records())
    finally:
        transcript.close()
    return messages_from(records), restored_state(records), past_events(records)
