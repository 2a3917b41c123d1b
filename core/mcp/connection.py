"""One MCP server's connection: started, listed, called, restarted after a crash, closed.

The SDK's `mcp.Client` is an anyio context manager that must be entered and left by the same
task, so each connection has a runner task that holds the client open until it is told to
close; calls come from the executor's tasks and only send requests through it.

What can go wrong is told in words, never raised past this module as the SDK's exceptions:
- a server that does not start within its timeout, or exits while starting, is `failed`,
  with the reason and the last lines it wrote to stderr (its stderr goes to a log file: a
  server writing to the terminal would tear the app's screen);
- a server that goes away during a call makes that call fail, and the server `crashed`; the
  next call to any of its tools starts it again (a call in flight cannot be retried: the
  server may have done half of it);
- closing waits for the SDK's own bounded shutdown (stdin closed, then SIGTERM, then SIGKILL).

The `mcp` SDK is imported only here and in the tool module, on first use: it costs over half
a second, which neither the app's first frame nor `proctor --version` may pay.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..events import McpServerChanged, McpState
from ..settings.mcp_servers import McpServerConfig

if TYPE_CHECKING:
    from mcp import Client
    from mcp.types import CallToolResult, Tool

_log = logging.getLogger(__name__)

DEFAULT_STARTUP_TIMEOUT_S = 30.0
"""How long a server may take to start and list its tools (`MCP_TIMEOUT`, in ms, changes it,
as it does for the tools users bring their configuration from)."""
DEFAULT_CALL_TIMEOUT_S: float | None = None
"""A call waits as long as the server takes unless `MCP_TOOL_TIMEOUT` (ms) says otherwise;
Esc cancels it either way."""
_LISTING_PAGES = 100
"""A server whose tool list never ends stops being paged here."""
_STDERR_TAIL_LINES = 5


def timeout_from_env(name: str, default: float | None) -> float | None:
    """`MCP_TIMEOUT=5000` → 5.0 seconds; an unreadable value keeps the default."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        milliseconds = float(raw)
    except ValueError:
        _log.warning("%s=%r is not a number of milliseconds; using the default", name, raw)
        return default
    return milliseconds / 1000 if milliseconds > 0 else default


class McpCallError(Exception):
    """A call that got no result: the message says why, in words for the model and user."""


class ServerConnection:
    """A configured server, its state and its tools; `start` once, then `call`, `close`."""

    def __init__(
        self,
        config: McpServerConfig,
        *,
        cwd: Path,
        log_dir: Path | None,
        on_change: Callable[[McpServerChanged], None],
        on_listed: Callable[[ServerConnection], str] | None = None,
        startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S,
        call_timeout_s: float | None = DEFAULT_CALL_TIMEOUT_S,
    ) -> None:
        self.config = config
        self.cwd = cwd
        self.log_dir = log_dir
        self.startup_timeout_s = startup_timeout_s
        self.call_timeout_s = call_timeout_s
        self._on_change = on_change
        self._on_listed = on_listed
        self.state: McpState = "connecting"
        self.detail = ""
        self.listed: tuple[Tool, ...] = ()
        """The tools the server listed when it last started."""
        self.tool_count = 0
        """How many of them the pool offers (set by whoever builds the tools)."""
        self._client: Client | None = None
        self._runner: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._starting = asyncio.Lock()
        self._closed = False
        self._log_start = 0
        """Where this start's lines begin in the log (a restart appends to it)."""

    @property
    def name(self) -> str:
        return self.config.name

    # -- starting ------------------------------------------------------------------------------

    async def start(self) -> bool:
        """Start the server and list its tools; True when it is ready. Never raises: a
        server that fails is `failed`, with the reason in `detail`."""
        async with self._starting:
            if self.state == "ready" or self._closed:
                return self.state == "ready"
            self._set("connecting")
            await self._stop_runner()
            self._log_start = _size(self.log_path)
            started: asyncio.Future[tuple[Tool, ...]] = asyncio.get_running_loop().create_future()
            started.add_done_callback(consume)  # a start given up on still ends with a reason
            self._closing = asyncio.Event()
            self._runner = asyncio.create_task(
                self._run(started, self._closing), name=f"mcp server {self.name}"
            )
            try:
                listed = await asyncio.wait_for(asyncio.shield(started), self.startup_timeout_s)
            except TimeoutError:
                self._abandon_start()
                self._set(
                    "failed",
                    self._with_stderr(f"did not start within {_secs(self.startup_timeout_s)}"),
                )
                return False
            except asyncio.CancelledError:
                self._abandon_start()
                raise
            except Exception as error:
                await self._stop_runner()
                reason = describe_error(error)
                if self.config.transport == "http":
                    reason = f"{self.config.url} did not answer as an MCP server ({reason})"
                self._set("failed", self._with_stderr(reason))
                return False
            self.listed = listed
            # The owner makes tools of the listing first, so "ready" comes with their count.
            detail = self._on_listed(self) if self._on_listed is not None else ""
            self._set("ready", detail)
            return True

    async def _run(self, started: asyncio.Future[tuple[Tool, ...]], closing: asyncio.Event) -> None:
        """Hold the client open until `closing` is set; the SDK's context stays in this task."""
        try:
            with self._stderr_log() as stderr:
                async with self._open_client(stderr) as client:
                    listed = await _list_tools(client)
                    self._client = client
                    if not started.done():
                        started.set_result(listed)
                    await closing.wait()
        except BaseException as error:  # the starter needs the reason, whatever it is
            if not started.done():
                started.set_exception(_plain(error))
            if not isinstance(error, Exception):
                raise  # a cancel (closing, or a start given up on) ends the task as cancelled
        finally:
            self._client = None

    def _open_client(self, stderr: TextIO) -> Client:
        from mcp import Client, StdioServerParameters
        from mcp.types import Implementation

        from .. import __version__

        info = Implementation(name="proctor", version=__version__)
        config = self.config
        if config.transport == "http":
            return Client(_http_transport(config), client_info=info)
        params = StdioServerParameters(
            command=config.command,
            args=list(config.args),
            env={**os.environ, **config.env},
            cwd=config.cwd or self.cwd,
        )
        from mcp.client.stdio import stdio_client

        return Client(stdio_client(params, errlog=stderr), client_info=info)

    @contextlib.contextmanager
    def _stderr_log(self) -> Any:
        """The server's stderr: a log file in the session (kept, for `tail`), else discarded."""
        path = self.log_path
        if path is None:
            with open(os.devnull, "w") as sink:
                yield sink
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8", errors="replace") as log:
            yield log

    @property
    def log_path(self) -> Path | None:
        return None if self.log_dir is None else self.log_dir / f"{self.name}.log"

    def _with_stderr(self, reason: str) -> str:
        tail = _tail(self.log_path, self._log_start)
        return f"{reason}; it wrote:\n{tail}" if tail else reason

    def _abandon_start(self) -> None:
        """A start that timed out or was cancelled: stop the runner (the SDK kills the
        process) without making the caller wait for the shutdown."""
        runner = self._runner
        if runner is not None and not runner.done():
            runner.cancel()
            # Closed in the background; `close` awaits it.
            runner.add_done_callback(consume)

    async def _stop_runner(self) -> None:
        runner, closing = self._runner, self._closing
        self._runner = None
        if runner is None:
            return
        if closing is not None:
            closing.set()
        with contextlib.suppress(BaseException):
            await runner

    # -- calling -------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call the server's `tool`; raises McpCallError (in words) when there is no result.
        A server that crashed earlier is started again first."""
        restart = self.state in ("crashed", "failed") and not self._closed
        if restart and not await self.start():
            raise McpCallError(
                f"the MCP server `{self.name}` could not be started again: {self.detail}"
            )
        client = self._client
        if client is None or self.state != "ready":
            raise McpCallError(f"the MCP server `{self.name}` is not running ({self.state})")
        from mcp import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT
        from pydantic import ValidationError

        try:
            return await client.call_tool(tool, arguments, read_timeout_seconds=self.call_timeout_s)
        except MCPError as error:
            if error.error.code == CONNECTION_CLOSED:
                self._set("crashed", self._with_stderr("it stopped during a call"))
                raise McpCallError(
                    f"the MCP server `{self.name}` stopped before answering (the call may "
                    "have been partly done); proctor starts it again on the next call to one "
                    "of its tools"
                ) from None
            if error.error.code == REQUEST_TIMEOUT:
                raise McpCallError(
                    f"the MCP server `{self.name}` did not answer within "
                    f"{_secs(self.call_timeout_s or 0)} (MCP_TOOL_TIMEOUT)"
                ) from None
            raise McpCallError(f"the MCP server `{self.name}` refused the call: {error}") from None
        except ValidationError as error:
            raise McpCallError(
                f"the MCP server `{self.name}` sent a result that is not valid MCP "
                f"({error.error_count()} problem(s), first: {_first_problem(error)})"
            ) from None

    # -- closing -------------------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._stop_runner()
        if self.state not in ("failed", "skipped"):
            self._set("closed")

    def _set(self, state: McpState, detail: str = "") -> None:
        self.state = state
        self.detail = detail
        try:
            self._on_change(
                McpServerChanged(
                    server=self.name,
                    state=state,
                    tools=self.tool_count if state == "ready" else 0,
                    detail=detail,
                    transport=self.config.transport,
                )
            )
        except Exception:
            _log.exception("MCP state listener failed")


async def _list_tools(client: Client) -> tuple[Tool, ...]:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(_LISTING_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tuple(tools)


def _http_transport(config: McpServerConfig) -> Any:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    return _OwnedHttpTransport(
        streamable_http_client, config.url, create_mcp_http_client(headers=dict(config.headers))
    )


class _OwnedHttpTransport:
    """The streamable HTTP transport with its own httpx client, closed with it (the SDK
    leaves a client it was given open)."""

    def __init__(self, factory: Any, url: str, http_client: Any) -> None:
        self._transport = factory(url, http_client=http_client)
        self._http = http_client

    async def __aenter__(self) -> Any:
        return await self._transport.__aenter__()

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            return await self._transport.__aexit__(*exc)
        finally:
            await self._http.aclose()


def describe_error(error: BaseException) -> str:
    """An exception from starting a server, in words: the first real cause of a group."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, FileNotFoundError):
        return f"its command was not found ({error.filename or error})"
    if isinstance(error, PermissionError):
        return f"its command cannot be run ({error})"
    text = str(error).strip()
    name = type(error).__name__
    if name == "MCPError" and "Connection closed" in text:
        return "it exited before it finished starting"
    return f"{name}: {text}" if text else name


def _plain(error: BaseException) -> BaseException:
    if isinstance(error, asyncio.CancelledError):
        return RuntimeError("the start was cancelled")
    return error


def _first_problem(error: Any) -> str:
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def _size(path: Path | None) -> int:
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


def _tail(path: Path | None, start: int) -> str:
    """The last lines written to the log since `start`."""
    if path is None:
        return ""
    try:
        with open(path, "rb") as log:
            log.seek(0, os.SEEK_END)
            size = log.tell()
            log.seek(max(start, size - 4096))
            text = log.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-_STDERR_TAIL_LINES:])


def _secs(seconds: float) -> str:
    return f"{seconds:g} s"


def consume(future: asyncio.Future[Any]) -> None:
    """Mark a future's outcome seen, so one nobody awaits (a start given up on, a gather
    cancelled at close) is not logged as "never retrieved" from the garbage collector."""
    if not future.cancelled():
        future.exception()
