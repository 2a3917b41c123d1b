"""The MCP server `mcp_startup_parallel_ratio` starts: it sleeps before it answers anything.

Standard library only: a server importing the MCP SDK spends ~0.6 s of CPU doing so, and
five of those at once would measure the machine's cores, not proctor's parallel start. It
speaks just enough stdio JSON-RPC (newline-delimited) for a client: `initialize`,
`tools/list` (one `echo` tool), `tools/call`, `ping`; notifications are ignored, and any
other request (`server/discover`, the 2.x client's first probe) is answered "method not
found", on which the client falls back to `initialize`.

    python mcp_slow_server.py [SECONDS]      # sleep SECONDS (default 0.5) before serving

`MCP_BENCH_LOG=<file>` appends every message received to that file.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

ECHO = {
    "name": "echo",
    "description": "Say the text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The result of a request, or raise LookupError for a method this server lacks."""
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-slow", "version": "1.0"},
        }
    if method == "tools/list":
        return {"tools": [ECHO]}
    if method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        return {"content": [{"type": "text", "text": text}], "isError": False}
    if method == "ping":
        return {}
    raise LookupError(method)


def main() -> None:
    time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0.5)
    log_path = os.environ.get("MCP_BENCH_LOG")
    log = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115
    for line in sys.stdin:
        if not line.strip():
            continue
        if log is not None:
            log.write(line)
            log.flush()
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32700, "message": "parse error"},
            }
        else:
            if not isinstance(message, dict) or "id" not in message or "method" not in message:
                continue  # a notification, or a response to nothing this server asked
            method = message["method"]
            reply = {"jsonrpc": "2.0", "id": message["id"]}
            try:
                reply["result"] = answer(method, message.get("params") or {})
            except LookupError:
                reply["error"] = {"code": -32601, "message": f"method not found: {method}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
