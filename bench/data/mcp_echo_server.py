"""The MCP server `mcp_call_overhead_ms` calls: one `echo` tool, written with the SDK."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-echo")


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


if __name__ == "__main__":
    server.run()
