"""A real stdio MCP server for the tests, written with the SDK; `argv[1]` picks its manner.

- `normal`: tools that add, echo, fail, return an image and a resource, and one marked
  destructive; `add` is marked read-only.
- `hang`: never answers the handshake (sleeps before serving).
- `exit`: exits at once with a message on stderr.
- `bad-tools`: tools whose names or schemas proctor cannot offer, beside one good tool.
- `collide`: a tool named like a built-in (`Read`).
- `underscore`: a tool whose name starts with `_` (`_echo`), beside the normal ones.
- `slow-start`: sleeps `argv[2]` seconds, then serves like `normal`.
- `http`: serves like `normal`, over streamable HTTP on 127.0.0.1, port `argv[2]`; its
  `header` tool says what a request header was.

`crash` (in every serving manner) exits the process in the middle of its call; `huge`
returns `n` characters; `wait` sleeps until cancelled.
"""

from __future__ import annotations

import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "normal"

if MODE == "exit":
    print("fixture server: cannot find its configuration", file=sys.stderr)
    sys.exit(2)
if MODE == "hang":
    print("fixture server: thinking very hard", file=sys.stderr, flush=True)
    time.sleep(3600)
if MODE == "slow-start":
    time.sleep(float(sys.argv[2]))

import anyio  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.types import (  # noqa: E402
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

server = MCPServer("fixture")
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
    "AAAABJRU5ErkJggg=="
)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> str:
    """Add two whole numbers.

    Returns their sum as text."""
    return str(a + b)


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
def fail(message: str) -> str:
    """Always fails with the message."""
    from mcp.server.mcpserver.exceptions import ToolError

    raise ToolError(message)


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """A caption and a one-pixel image."""
    return [
        TextContent(type="text", text="one red pixel"),
        ImageContent(type="image", data=PNG, mime_type="image/png"),
    ]


@server.tool()
def document() -> list[EmbeddedResource]:
    """An embedded text resource."""
    contents = TextResourceContents(uri="file:///notes.txt", mime_type="text/plain", text="notes")
    return [EmbeddedResource(type="resource", resource=contents)]


@server.tool(annotations=ToolAnnotations(destructiveHint=True))
def wipe(target: str) -> str:
    """Pretends to delete the target."""
    return f"wiped {target}"


@server.tool()
def crash() -> str:
    """Exits the server in the middle of the call."""
    os._exit(3)


@server.tool()
def huge(n: int) -> str:
    """Returns n characters."""
    return "".join(f"line {i:06d}\n" for i in range(n // 12 + 1))[:n]


@server.tool()
async def wait() -> str:
    """Waits until cancelled."""
    await anyio.sleep(3600)
    return "never"


@server.tool()
def pid() -> str:
    """The server's process id (tells a restarted server from the first)."""
    return str(os.getpid())


if MODE == "bad-tools":

    @server.tool(name="has space")
    def spaced() -> str:
        return "no"

    @server.tool(name="x" * 70)
    def too_long() -> str:
        return "no"

    @server.tool(name="broken_schema")
    def broken_schema() -> str:
        return "no"

    # What a careless server sends: an input schema that is not valid JSON Schema. (One
    # whose root is not an object the SDK refuses to send at all.)
    server._tool_manager.get_tool("broken_schema").parameters = {
        "type": "object",
        "properties": {"n": {"type": 12}},
    }

if MODE == "http":
    from mcp.server.mcpserver import Context

    @server.tool()
    def header(name: str, ctx: Context) -> str:
        """The value of a header of the HTTP request that carried this call."""
        request = ctx.request_context.request
        return str(request.headers.get(name) if request is not None else None)


if MODE == "collide":

    @server.tool(name="Read")
    def read_like(path: str) -> str:
        """Reads nothing: named like a built-in."""
        return f"mcp read {path}"


if MODE == "underscore":

    @server.tool(name="_echo")
    def underscore_echo(text: str) -> str:
        """Say the text back (a name that starts with `_`)."""
        return text


if __name__ == "__main__":
    if MODE == "http":
        server.run("streamable-http", port=int(sys.argv[2]))
    else:
        server.run()
