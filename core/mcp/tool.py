"""An MCP server's tool as a proctor tool: `mcp__<server>__<tool>`.

One class for every server tool, made from what the server listed: its description, its
JSON schema (checked before the call, so the model hears about a bad argument in our words
and the server never sees it), and its hints:

- `readOnlyHint`: read-only and concurrency-safe (plan mode allows it; default mode does
  not ask, unless a rule says so);
- `destructiveHint`: never beside other calls, and the approval says the server calls it
  destructive;
- neither: may run beside other calls (seed 001: an MCP tool is an external service) but is
  not read-only, so it asks unless a rule allows it.

A hint that says both read-only and destructive is taken as destructive. Rules name MCP tools
whole (`mcp__github`, `mcp__github__*`, `mcp__github__create_issue`): their input has no
command or path a specifier could match.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from ..access.mcp_names import tool_name
from ..settings.mcp_servers import McpServerConfig
from ..tool import (
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolResult,
    failure,
    shorten,
)
from .connection import McpCallError, ServerConnection
from .content import content_text, render_content

if TYPE_CHECKING:
    from mcp.types import Tool as ListedTool


class McpArguments(BaseModel):
    """Whatever the server's schema allows: checked against that schema, not a model."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True, slots=True)
class McpOutput:
    """What the server answered: its content blocks as wire JSON, and structured content."""

    content: tuple[Mapping[str, Any], ...]
    structured: Any = None


class UnusableTool(ValueError):
    """A listed tool proctor cannot offer; the message says why (it is skipped)."""


class McpTool(Tool[McpArguments, McpOutput]):
    is_mcp = True
    input_model = McpArguments
    interrupt_behavior = "cancel"
    # Tools of a server the person configured: the general-purpose sub-agent gets them, the
    # read-only Explore and Plan agents do not.
    subagents = "general-purpose"

    def __init__(self, listed: ListedTool, connection: ServerConnection) -> None:
        self.connection = connection
        self.server = connection.name
        self.remote_name = listed.name
        self.name = tool_name(self.server, listed.name)
        self.description = _first_line(listed.description) or f"{listed.name} ({self.server})"
        self.instructions = (listed.description or "").strip()
        self.search_hint = f"{self.server} {listed.title or listed.name}"
        self._schema = usable_schema(listed.input_schema)
        self._validator = _validator(self._schema)
        hints = listed.annotations
        self.destructive = bool(hints and hints.destructive_hint)
        self.read_only = bool(hints and hints.read_only_hint) and not self.destructive

    def input_json_schema(self) -> dict[str, Any]:
        return self._schema

    def parse_input(self, raw: Any) -> McpArguments:
        if not isinstance(raw, Mapping):
            raise ValueError(f"the input must be a JSON object, not {type(raw).__name__}")
        problems = sorted(
            self._validator.iter_errors(raw), key=lambda e: [str(part) for part in e.path]
        )
        if problems:
            listed = "\n".join(f"- {_problem(error)}" for error in problems[:5])
            raise ValueError(f"it does not match the server's schema:\n{listed}")
        return McpArguments.model_validate(raw)

    def is_read_only(self, input: McpArguments) -> bool:
        return self.read_only

    def is_concurrency_safe(self, input: McpArguments) -> bool:
        return not self.destructive

    def summarize_input(self, input: McpArguments) -> str:
        arguments = input.model_extra or {}
        for value in arguments.values():
            if isinstance(value, str) and value.strip():
                return shorten(value, 80)
        return (
            shorten(json.dumps(arguments, ensure_ascii=False, default=str), 80) if arguments else ""
        )

    async def call(
        self, input: McpArguments, context: ToolContext, progress: Progress
    ) -> ToolResult[McpOutput]:
        try:
            result = await self.connection.call(self.remote_name, dict(input.model_extra or {}))
        except McpCallError as error:
            return failure(str(error))
        blocks = tuple(
            block.model_dump(by_alias=True, exclude_none=True, mode="json")
            for block in result.content
        )
        if result.is_error:
            message = content_text(blocks).strip() or "the server said the call failed"
            return failure(message)
        return ToolResult(McpOutput(blocks, result.structured_content))

    def render(self, output: Any) -> ToolContent:
        """The server's content, or what a PostToolUse hook put in its place
        (`updatedMCPToolOutput`: text, or a list of MCP content blocks)."""
        if isinstance(output, McpOutput):
            return render_content(output.content, output.structured)
        if isinstance(output, list):
            return render_content(output)
        if isinstance(output, str):
            return output
        return json.dumps(output, ensure_ascii=False, default=str)

    def hook_response(self, input: McpArguments, data: Any) -> Any:
        """PostToolUse hooks read what the seeds' system gives them: the content blocks."""
        if isinstance(data, McpOutput):
            return [dict(block) for block in data.content]
        return data


def configured_tool(config: McpServerConfig, remote_name: str) -> McpTool:
    """A server's tool known only by name, for `proctor check`, which starts no server: any
    object is accepted as its input, and without the server's hints it is not read-only."""
    from mcp.types import Tool as ListedTool

    listed = ListedTool(name=remote_name, input_schema={"type": "object"})
    connection = ServerConnection(config, cwd=Path.cwd(), log_dir=None, on_change=_ignore)
    return McpTool(listed, connection)


def _ignore(_: object) -> None:
    return None


def usable_schema(schema: Any) -> dict[str, Any]:
    """The server's input schema as the API takes it (an object schema), or UnusableTool.
    (Whether it is valid JSON Schema is for `_validator` to say.)"""
    if not isinstance(schema, Mapping):
        raise UnusableTool(f"its input schema is not a JSON object ({type(schema).__name__})")
    usable: dict[str, Any] = dict(schema)
    kind = usable.get("type", "object")
    if kind != "object":
        raise UnusableTool(f"its input schema describes {kind!r}, not an object of arguments")
    usable["type"] = "object"
    return usable


def _validator(schema: dict[str, Any]) -> Any:
    from jsonschema import SchemaError  # type: ignore[import-untyped]
    from jsonschema.validators import validator_for  # type: ignore[import-untyped]

    cls: Any = validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as error:
        raise UnusableTool(f"its input schema is not valid JSON Schema: {error.message}") from None
    return cls(schema)


def _problem(error: Any) -> str:
    where = ".".join(str(part) for part in error.path)
    return f"`{where}`: {error.message}" if where else error.message


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return shorten(line.strip(), 120)
    return ""
