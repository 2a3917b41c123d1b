"""What the app does with a line that starts with `/`.

`handle_line` resolves the line against the session's `CommandRegistry` (core/agent/commands.py)
and returns the prompt to send to the model, or None when the line was a built-in that ran
here, an unknown command (said in the conversation, never sent), or a command that could not
run now. Built-ins are one small function each, by their closed `action` name, and mostly
reuse what a key or the palette does (keys.py), so a command and its key cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from core.access.modes import MODE_LABELS
from core.agent.commands import (
    NOT_YET,
    BuiltinAction,
    NotACommand,
    RunBuiltin,
    SendPrompt,
    UnknownCommand,
    help_lines,
    not_yet_message,
    resolve,
    unknown_message,
)

if TYPE_CHECKING:
    from .app import ProctorApp


def handle_line(app: ProctorApp, text: str) -> str | None:
    """The prompt to send for `text`, or None when nothing goes to the model."""
    resolved = resolve(text, app.prompt_input.commands)
    if isinstance(resolved, NotACommand):
        return text
    if isinstance(resolved, UnknownCommand):
        registry = app.prompt_input.commands
        if not registry.complete:  # typed before the project's commands were read
            app.prompt_input.value = text
            app.prompt_input.cursor_position = len(text)
            app.conversation.add_notice(
                f"The custom commands are still being read, so /{resolved.name} is not known "
                "yet; it is back in the input: enter sends it.",
                "info",
            )
            return None
        app.conversation.add_notice(unknown_message(resolved.name, registry), "warning")
        return None
    if isinstance(resolved, SendPrompt):
        command = resolved.command
        if command.allowed_tools is not None:
            listed = ", ".join(command.allowed_tools) or "no tools"
            app.conversation.add_notice(
                f"/{command.name} limits this turn to its allowed-tools ({listed}): other "
                "calls are refused, and these still ask as your rules and mode say.",
                "info",
            )
        if command.model:
            app.conversation.add_notice(f"/{command.name} uses {command.model} for this prompt.")
        return resolved.prompt
    _run_builtin(app, resolved)
    return None


def _run_builtin(app: ProctorApp, run: RunBuiltin) -> None:
    action = run.command.action
    if action in NOT_YET:
        app.conversation.add_notice(not_yet_message(run.command), "warning")
        return
    needs_session = action in ("clear", "model", "mode", "permissions", "memory", "compact")
    if needs_session and app.live is None:
        app.conversation.add_notice(
            f"/{run.command.name}: the session has not started yet.", "warning"
        )
        return
    _HANDLERS[action](app, run.arguments)


def _help(app: ProctorApp, arguments: str) -> None:
    lines = help_lines(app.prompt_input.commands)
    app.conversation.add_notice("Slash commands:\n" + "\n".join(lines), "info")


def _clear(app: ProctorApp, arguments: str) -> None:
    assert app.live is not None
    if app.live.running:
        app.conversation.add_notice(
            "/clear waits for the turn to end: press esc to stop it first.", "warning"
        )
        return
    app.live.clear_conversation()
    app.conversation.add_notice(
        "── conversation cleared: the model starts afresh (the transcript keeps everything) ──",
        "info",
    )


def _model(app: ProctorApp, arguments: str) -> None:
    assert app.live is not None
    name = arguments.strip()
    if not name:
        app.conversation.add_notice(
            f"The model is {app.live.model.model}. /model NAME uses another.", "info"
        )
        return
    if any(c.isspace() for c in name):
        app.conversation.add_notice(f"/model takes one model name, not {name!r}.", "warning")
        return
    app.live.use_model(name)
    app.status_bar.model = name
    app.conversation.add_notice(f"The model is now {name}, from the next request on.", "info")


def _mode(app: ProctorApp, arguments: str) -> None:
    assert app.live is not None
    from .palette import _reachable_modes

    reachable = _reachable_modes(app)
    wanted = arguments.strip()
    names = ", ".join(reachable)
    if not wanted:
        label = MODE_LABELS.get(app.live.mode, app.live.mode)
        app.conversation.add_notice(f"The mode is {label}. /mode one of: {names}.", "info")
        return
    match = next((m for m in reachable if m.lower() == wanted.lower()), None)
    if match is None:
        app.conversation.add_notice(
            f"/mode: {wanted!r} is not a mode you can switch to here ({names}).", "warning"
        )
        return
    app.set_mode(match)


def _permissions(app: ProctorApp, arguments: str) -> None:
    assert app.live is not None
    if arguments.strip():
        from .slash_permissions import change_rule  # a rule for the session or a file

        app.conversation.add_notice(*change_rule(app, arguments.strip()))
        return
    context = app.live.store.get().permission_context
    label = MODE_LABELS.get(context.mode, context.mode)
    lines = [f"Mode: {label}."]
    for behavior in ("deny", "ask", "allow"):
        rules = context.rules_with(behavior)
        if not rules:
            continue
        lines.append(f"{behavior.capitalize()} rules:")
        for rule in rules:
            where = str(rule.path) if rule.path else rule.source
            lines.append(f"  {rule}  — {where}")
    if len(lines) == 1:
        lines.append("No rules: every call the mode does not decide asks you.")
    app.conversation.add_notice("\n".join(lines), "info")


def _todos(app: ProctorApp, arguments: str) -> None:
    from .widgets.todos import todo_field

    todos = app.todo_list.todos
    if not todos:
        app.conversation.add_notice("No todos yet.", "info")
        return
    marks = {"completed": "✓", "in_progress": "▶", "pending": "·"}
    lines = [f"{marks.get(todo_field(t, 'status'), '·')} {todo_field(t, 'content')}" for t in todos]
    app.conversation.add_notice("Todos:\n" + "\n".join(lines), "info")


def _cost(app: ProctorApp, arguments: str) -> None:
    from .widgets.status_bar import describe_cost

    bar = app.status_bar
    usage = bar.usage
    tokens = ", ".join(
        f"{value:,} {key.replace('_', ' ')}" for key, value in usage.items() if value
    )
    cost = describe_cost(bar.cost_usd)
    app.conversation.add_notice(
        f"This session so far: {cost}; {tokens or 'no tokens yet'}.", "info"
    )


def _memory(app: ProctorApp, arguments: str) -> None:
    assert app.live is not None
    instructions = app.live.instructions
    rows = instructions.listing() if instructions is not None else []
    problems = instructions.problems if instructions is not None else ()
    if not rows:
        lines = ["No instruction files are in use (CLAUDE.md, .claude/CLAUDE.md, .claude/rules,"]
        lines.append("CLAUDE.local.md, AGENTS.md in the project, ~/.claude/CLAUDE.md for you).")
    else:
        lines = ["Instructions the model was given:"]
        lines += [f"  {path} — {how}" for path, how in rows]
    lines += [f"  problem: {problem}" for problem in problems]
    app.conversation.add_notice("\n".join(lines), "info")


def _status(app: ProctorApp, arguments: str) -> None:
    app.action_status()  # the screen F3 and the palette open (keys.py)


def _compact(app: ProctorApp, arguments: str) -> None:
    app.compact(arguments)  # the engine's, as the palette entry runs it (app.py)


def _mcp(app: ProctorApp, arguments: str) -> None:
    app.action_mcp_servers()


def _sessions(app: ProctorApp, arguments: str) -> None:
    app.action_sessions()


def _resume(app: ProctorApp, arguments: str) -> None:
    from .resume import resume_refusal

    wanted = arguments.strip()
    if (why := resume_refusal(app)) is not None:
        app.conversation.add_notice(why, "warning")
        return
    if not wanted:  # pick one: enter in the list carries it on here
        app.action_sessions(pick=True)
        return
    app.resume_session(wanted)


_HANDLERS: dict[BuiltinAction, Callable[[ProctorApp, str], None]] = {
    "help": _help,
    "clear": _clear,
    "model": _model,
    "mode": _mode,
    "permissions": _permissions,
    "todos": _todos,
    "cost": _cost,
    "memory": _memory,
    "status": _status,
    "compact": _compact,
    "mcp": _mcp,
    "sessions": _sessions,
    "resume": _resume,
}
