"""The project's changelog as an MCP server: the agent records changes through it.

A small stdio server written with the MCP SDK (`mcp.server.mcpserver.MCPServer`). `.mcp.json`
starts it; proctor offers its tools as `mcp__changelog__list_entries` (read-only: the server
marks it so) and `mcp__changelog__add_entry` (which asks before it runs).
"""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

CHANGES = Path(__file__).resolve().parent.parent / "CHANGES.md"
HEADING = "## Unreleased"

server = MCPServer("changelog", instructions="Keeps CHANGES.md, the project's changelog.")


def _entries() -> list[str]:
    if not CHANGES.exists():
        return []
    return [line[2:] for line in CHANGES.read_text().splitlines() if line.startswith("- ")]


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def list_entries() -> str:
    """List the changelog's unreleased entries."""
    entries = _entries()
    return "\n".join(f"- {entry}" for entry in entries) if entries else "(no entries yet)"


@server.tool()
def add_entry(text: str) -> str:
    """Add one line to the changelog's unreleased section (CHANGES.md)."""
    text = " ".join(text.split())
    if not text:
        raise ValueError("an entry needs some text")
    lines = CHANGES.read_text().splitlines() if CHANGES.exists() else ["# Changes", "", HEADING]
    if HEADING not in lines:
        lines += ["", HEADING]
    at = lines.index(HEADING) + 1
    while at < len(lines) and lines[at].startswith("- "):
        at += 1
    lines.insert(at, f"- {text}")
    CHANGES.write_text("\n".join(lines) + "\n")
    return f"CHANGES.md now has {len(_entries())} unreleased entries."


if __name__ == "__main__":
    server.run()
