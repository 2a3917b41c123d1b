"""The `proctor` command line.

Startup matters: `proctor --version` must answer without importing textual or anthropic
(each takes hundreds of milliseconds), so this module imports only the standard library and
`core`'s version, and loads the app, or the engine for `proctor check`, lazily once it knows
which it will run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core import __version__

if TYPE_CHECKING:
    from core.agent.options import SessionOptions

MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
_SETTINGS_HELP = (
    "one more settings file for this run, above the project's own files and below "
    "--allow/--deny/--ask"
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="proctor",
        description="Supervised agent runs: watch, approve and steer every tool call.",
    )
    parser.add_argument("--version", action="version", version=f"proctor {__version__}")
    parser.add_argument(
        "-p",
        "--print",
        dest="prompt",
        metavar="PROMPT",
        nargs="?",
        const="",
        help="run this prompt headless (no screen) and print what happens; "
        "with --demo and no PROMPT, the scenario's own",
    )
    parser.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
        help="with -p: text, one JSON result, or JSON lines",
    )
    parser.add_argument(
        "--show-thinking",
        action="store_true",
        help="with -p and text output: print the model's thinking on stderr (dim on a "
        "terminal); json and stream-json carry it in each assistant message",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="the offline demo model (no key, no network) on a sample project",
    )
    parser.add_argument("--scenario", metavar="NAME|PATH", help="the demo's script")
    parser.add_argument(
        "--keep-workspace",
        action="store_true",
        help="with --demo: keep its scratch copy of the sample project at exit (removed "
        "otherwise), so --demo --continue can carry on in it",
    )
    parser.add_argument("--theme", metavar="NAME", help="the colour theme (default: proctor-dark)")
    parser.add_argument(
        "--serve",
        action="store_true",
        help="serve the app to a web browser (textual-serve) instead of this terminal",
    )
    parser.add_argument("--host", default="localhost", help="with --serve: the address")
    parser.add_argument("--port", type=int, default=8000, help="with --serve: the port")
    parser.add_argument("--model", help="the model to use (default: settings or built in)")
    parser.add_argument("--permission-mode", choices=MODES, help="the mode to start in")
    parser.add_argument(
        "--allow-bypass",
        action="store_true",
        help="make bypassPermissions reachable in this session",
    )
    parser.add_argument("--max-turns", type=int, default=100, help="model requests at most")
    parser.add_argument(
        "--trust", action="store_true", help="trust this project's hooks and settings"
    )
    parser.add_argument(
        "--continue",
        dest="continue_latest",
        action="store_true",
        help="carry on this project's most recently active session",
    )
    parser.add_argument("--resume", metavar="ID", help="carry on the session with this id")
    parser.add_argument("--settings", metavar="FILE", help=_SETTINGS_HELP)
    for behavior in ("allow", "deny", "ask"):
        parser.add_argument(
            f"--{behavior}",
            action="append",
            default=[],
            metavar="RULE",
            help=f"an extra {behavior} rule for this session (repeatable)",
        )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = commands.add_parser(
        "check",
        help="explain what would happen to a tool call, without running it",
        description="Explain what would happen to a tool call, without running it: the "
        "decision, and which rule from which file, which mode or which part of a command "
        "decided. Hooks are not run.",
    )
    check.add_argument("tool", nargs="?", help="the tool, e.g. Bash or Read")
    check.add_argument(
        "input", nargs="?", help="its input as JSON, or plain text for a one-field tool"
    )
    check.add_argument(
        "--batch",
        action="store_true",
        help="read JSON lines on stdin, write one JSON answer per line",
    )
    check.add_argument("--mode", choices=MODES, help="the permission mode (default: settings)")
    check.add_argument("--cwd", type=Path, default=None, help="the working directory")
    for behavior in ("allow", "deny", "ask"):
        check.add_argument(
            f"--{behavior}",
            action="append",
            default=[],
            metavar="RULE",
            help=f"an extra {behavior} rule (repeatable)",
        )
    check.add_argument("--isolated", action="store_true", help="read no settings file")
    check.add_argument("--settings", metavar="FILE", default=argparse.SUPPRESS, help=_SETTINGS_HELP)
    check.add_argument("--json", action="store_true", help="answer as JSON")
    sessions = commands.add_parser(
        "sessions", help="list this project's sessions, most recently active first"
    )
    sessions.add_argument("--cwd", type=Path, default=None, help="the project directory")
    sessions.add_argument("--json", action="store_true", help="one JSON object per session")
    sessions.add_argument(
        "--demo", action="store_true", help="the demo's sessions (kept under its sample project)"
    )
    mcp = commands.add_parser("mcp", help="the MCP servers this project would start")
    mcp_commands = mcp.add_subparsers(dest="mcp_command", metavar="COMMAND", required=True)
    listing = mcp_commands.add_parser(
        "list",
        help="start each configured MCP server, list its tools, and stop it",
        description="Start each MCP server the settings and .mcp.json configure, as a session "
        "would, and show its state and tools (or why it failed); then stop them all.",
    )
    listing.add_argument("--cwd", type=Path, default=None, help="the project directory")
    listing.add_argument("--json", action="store_true", help="one JSON object per server")
    listing.add_argument(
        "--settings", metavar="FILE", default=argparse.SUPPRESS, help=_SETTINGS_HELP
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`proctor check ... | head -1`): that is how pipes end, not
        # an error. Point stdout at /dev/null so the interpreter's final flush stays quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def _main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.keep_workspace and not args.demo:
        parser.error("--keep-workspace keeps the demo's scratch copy: use it with --demo")
    if args.command == "check":
        if not args.batch and (args.tool is None or args.input is None):
            parser.error("check needs a TOOL and its INPUT, or --batch")
        if args.isolated and getattr(args, "settings", None) is not None:
            parser.error("--isolated reads no settings file, so --settings would be ignored")
        return run_check(args)
    if args.command == "sessions":
        return run_sessions(args)
    if args.command == "mcp":
        return run_mcp_list(args)
    if args.show_thinking and (args.prompt is None or args.output_format != "text"):
        parser.error(
            "--show-thinking prints thinking in -p's text output; json and stream-json carry "
            "it in each assistant message, and in the app ctrl+r opens it"
        )
    if args.prompt is not None or args.output_format != "text":
        return run_print(args)
    if args.serve:
        return run_serve(args, list(sys.argv[1:] if argv is None else argv))
    return run_app(args)


def settings_file(args: argparse.Namespace) -> Path | None:
    """`--settings`, made absolute: the demo works in another directory than this one."""
    text: str | None = getattr(args, "settings", None)
    if text is None:
        return None
    if text.lstrip().startswith("{"):  # inline JSON: refused, with the reason, by the reader
        return Path(text)
    return Path(text).expanduser().absolute()


def settings_file_error(args: argparse.Namespace) -> str | None:
    """Why the `--settings` file cannot be used (missing, unreadable), or None: said before
    anything starts, since the run would otherwise lack what the user put in it."""
    path = settings_file(args)
    if path is None:
        return None
    from core.settings.read import SettingsFileError, require_settings_file

    try:
        require_settings_file(path)
    except SettingsFileError as error:
        return str(error)
    return None


def run_app(args: argparse.Namespace) -> int:
    if (error := settings_file_error(args)) is not None:
        print(f"proctor: {error}", file=sys.stderr)
        return 2
    from core.agent.model import has_credentials

    if not args.demo and not has_credentials():
        from core.agent.model import missing_key_message

        print(f"proctor: {missing_key_message()}", file=sys.stderr)
        return 1
    from .collector import hold_until_first_frame

    hold_until_first_frame()  # tui/collector.py
    from .app import LaunchOptions, ProctorApp

    app = ProctorApp(
        LaunchOptions(
            session_options(args), theme=args.theme, trust=args.trust, play_demo=args.demo
        )
    )
    app.run()
    if app.prepared is not None:
        from core.agent.live import end_workspace

        said = end_workspace(app.prepared)  # after the session's shells have stopped
        if said:
            print(f"proctor: {said}", file=sys.stderr)
    return app.return_code or 0


def serve_command(argv: Sequence[str]) -> str:
    """The command textual-serve runs for each browser: this one, minus the serving flags."""
    import shlex

    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--serve":
            continue
        if arg in ("--host", "--port"):
            skip = True
            continue
        if arg.startswith(("--host=", "--port=")):
            continue
        kept.append(arg)
    return shlex.join([sys.executable, "-m", "tui", *kept])


def run_serve(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from textual_serve.server import Server

    command = serve_command(argv)
    print(f"proctor: serving `{command}` at http://{args.host}:{args.port}", file=sys.stderr)
    Server(command, host=args.host, port=args.port, title="proctor").serve()
    return 0


def session_options(args: argparse.Namespace) -> SessionOptions:
    from core.agent.options import SessionOptions

    return SessionOptions(
        cwd=Path.cwd(),
        demo=args.demo,
        scenario=args.scenario,
        model=args.model,
        mode=args.permission_mode,
        allow_bypass=args.allow_bypass,
        allow=tuple(args.allow),
        deny=tuple(args.deny),
        ask=tuple(args.ask),
        max_turns=args.max_turns,
        resume=args.resume,
        continue_latest=args.continue_latest,
        settings_file=settings_file(args),
        keep_workspace=args.keep_workspace,
    )


def run_check(args: argparse.Namespace) -> int:
    import asyncio
    import json

    from core.check import Checker, CheckError, CheckRequest, check_batch
    from core.registry import all_base_tools
    from core.tool import ToolPool

    if (error := settings_file_error(args)) is not None:
        if args.json:
            print(json.dumps({"error": error}))
        else:
            print(f"proctor check: {error}", file=sys.stderr)
        return 2
    cwd = (args.cwd or Path.cwd()).resolve()
    checker = Checker(
        ToolPool(all_base_tools()),
        cwd=cwd,
        isolated=args.isolated,
        settings_file=settings_file(args),
    )
    if args.batch:

        async def batch() -> None:
            write = sys.stdout.write
            async for answer in check_batch(checker, sys.stdin, cwd):
                write(json.dumps(answer) + "\n")

        asyncio.run(batch())
        return 0
    request = CheckRequest(
        args.tool, args.input, args.mode, cwd, tuple(args.allow), tuple(args.deny), tuple(args.ask)
    )
    try:
        result = asyncio.run(checker.check(request))
    except CheckError as error:
        if args.json:
            print(json.dumps({"error": str(error)}))
        else:
            print(f"proctor check: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.as_json()))
    else:
        print(result.as_text(args.input if isinstance(args.input, str) else ""))
    return 0


def run_sessions(args: argparse.Namespace) -> int:
    import json
    import time

    from core.agent.sessions import list_sessions

    if args.demo:
        from core.agent.demo_workspace import sample_dir

        project = sample_dir()
    else:
        project = (args.cwd or Path.cwd()).resolve()
    summaries = list_sessions(project)
    if args.json:
        for summary in summaries:
            print(
                json.dumps(
                    {
                        "id": summary.id,
                        "created": summary.created,
                        "last_activity": summary.last_activity,
                        "title": summary.title,
                        "model": summary.model,
                        "messages": summary.messages,
                        "turns": summary.turns,
                        "ended_cleanly": summary.ended_cleanly,
                    }
                )
            )
        return 0
    if not summaries:
        print(f"No sessions for {project} yet.")
        return 0
    for summary in summaries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(summary.last_activity))
        state = "" if summary.ended_cleanly else "  (did not end cleanly)"
        title = summary.title or "(no prompt yet)"
        print(f"{summary.id}  {when}  {summary.turns:>3} turns  {title}{state}")
    return 0


def run_mcp_list(args: argparse.Namespace) -> int:
    import asyncio
    import json

    from core.mcp.report import list_servers
    from core.settings.read import load_settings
    from core.trust import is_trusted

    if (error := settings_file_error(args)) is not None:
        print(f"proctor: {error}", file=sys.stderr)
        return 2
    project = (args.cwd or Path.cwd()).resolve()
    settings = load_settings(project, settings_file=settings_file(args))
    for problem in settings.problems:
        print(f"proctor: {problem}", file=sys.stderr)
    if not settings.mcp_servers:
        if not args.json:
            print(
                f"No MCP servers are configured for {project}: add them to .mcp.json in the "
                "project or to mcpServers in a settings file."
            )
        return 0
    reports = asyncio.run(
        list_servers(settings.mcp_servers, cwd=project, trusted=is_trusted(project))
    )
    if args.json:
        for report in reports:
            print(json.dumps(report.as_json()))
    else:
        print("\n\n".join(report.as_text() for report in reports))
    return 0 if all(r.state == "ready" for r in reports) else 1


def run_print(args: argparse.Namespace) -> int:
    # Before anything heavy is imported: see core/agent/lifespan.py.
    from core.agent.lifespan import leave, pause_collector

    pause_collector()
    import asyncio
    from dataclasses import asdict

    from core.agent.headless import HeadlessOptions, run_headless

    # A headless run is the same session, plus what only headless runs have.
    options = HeadlessOptions(
        prompt=args.prompt,
        output_format=args.output_format,
        show_thinking=args.show_thinking,
        trust=args.trust,
        **asdict(session_options(args)),
    )
    try:
        status = asyncio.run(run_headless(options))
    except ValueError as error:  # the scenario module loads only for a demo's error
        from core.agent.scenario import ScenarioError

        if not isinstance(error, ScenarioError):
            raise
        print(f"proctor: {error}", file=sys.stderr)
        return 2
    # The session is closed and everything printed: skip the interpreter's teardown.
    leave(status)
