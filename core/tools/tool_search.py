"""ToolSearch: load the schemas of deferred tools on demand.

With many tools (MCP servers especially), sending every schema on every request costs
context the model mostly never uses. A tool that `should_defer` is listed to the model by
name only (`deferred_tools_notice`); before calling it, the model asks ToolSearch for it,
gets its description and JSON schema back, and from the next request on the tool counts as
loaded: the call's `context_modifier` adds its name to `options.discovered_tools`, which is
what the request builder and the schema-error hint (core/executor/lifecycle.py) look at.

Two ways to ask:
- `select:Read,WebFetch`: those tools by exact name (an alias works too). A tool that is not
  deferred is already available and is said to be; a name nobody has is listed as unknown.
- keywords: deferred tools ranked by how well the words match their name (split at CamelCase
  and at the `mcp__server__tool` separators), their search hint and their description.
  `+word` keeps only tools whose name contains the word.

Only deferred tools are searched by keyword: the others' schemas are in the tool list
already, and returning them again would only spend context. Read-only and concurrency-safe:
it changes nothing but which schemas the model sees next.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from pydantic import Field

from ..tool import (
    AnyTool,
    ContextModifier,
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolOptions,
    ToolPool,
    ToolResult,
)

SELECT_PREFIX = "select:"
MAX_RESULTS_CAP = 20

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_WORD = re.compile(r"[a-z0-9]+")
# Words every search is likely to contain, which tell tools apart not at all.
_NOISE = frozenset({"a", "an", "the", "to", "of", "for", "and", "or", "with", "tool", "tools"})


class ToolSearchInput(ToolInput):
    query: str = Field(
        min_length=1,
        description='"select:Name1,Name2" to load tools by exact name, or keywords to search '
        'the deferred tools ("jira issue", "+slack send").',
    )
    max_results: int = Field(
        default=5, ge=1, le=MAX_RESULTS_CAP, description="The most tools to return (default 5)."
    )


@dataclass(frozen=True, slots=True)
class FoundTool:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    query: str
    found: tuple[FoundTool, ...] = ()
    already_available: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    deferred: tuple[str, ...] = ()
    """Every deferred tool's name, for the message when nothing matched."""


PROMPT = """\
Load the full definitions of deferred tools so that you can call them. Deferred tools are \
listed to you by name only; calling one before loading it fails, because you do not know \
its parameters yet.

- "select:Name1,Name2" loads those tools by exact name. Use it when you know the name.
- Otherwise give keywords describing what you need ("create jira issue"); the best matching \
deferred tools are returned. Prefix a word with + to require it in the tool's name \
("+slack send").

Each result gives a tool's description and input schema, and the tool can be called from \
your next message on. Load only the tools you are about to use."""


class ToolSearch(Tool[ToolSearchInput, SearchOutcome]):
    name = "ToolSearch"
    subagents = "every"
    search_hint = "find and load deferred tool schemas by name or keyword"
    input_model = ToolSearchInput
    description = "Loads the definitions of deferred tools, by name or by keyword search."

    instructions = PROMPT

    def is_read_only(self, input: ToolSearchInput) -> bool:
        return True

    def is_concurrency_safe(self, input: ToolSearchInput) -> bool:
        return True

    async def call(
        self, input: ToolSearchInput, context: ToolContext, progress: Progress
    ) -> ToolResult[SearchOutcome]:
        pool = context.options.tools or ToolPool()
        query = input.query.strip()
        deferred = pool.deferred()
        names = tuple(t.name for t in deferred)
        if query.lower().startswith(SELECT_PREFIX):
            wanted = [n.strip() for n in query[len(SELECT_PREFIX) :].split(",") if n.strip()]
            if not wanted:
                return ToolResult(
                    'Name at least one tool after "select:", e.g. "select:WebFetch".',
                    is_error=True,
                )
            outcome = _select(pool, wanted, context.options)
        else:
            if not any(search_terms(query)):
                return ToolResult(
                    "Give some keywords describing the tool you need, or "
                    '"select:Name" to load a tool by name.',
                    is_error=True,
                )
            chosen = rank(deferred, query)[: input.max_results]
            outcome = SearchOutcome(query, tuple(_found(t, context.options) for t in chosen))
        outcome = replace(outcome, query=query, deferred=names)
        loaded = frozenset(f.name for f in outcome.found)
        return ToolResult(outcome, context_modifier=_discover(loaded) if loaded else None)

    def render(self, output: SearchOutcome) -> ToolContent:
        return render(output)


def _select(pool: ToolPool, wanted: list[str], options: ToolOptions) -> SearchOutcome:
    found: list[FoundTool] = []
    available: list[str] = []
    unknown: list[str] = []
    for name in wanted:
        tool = pool.find(name) or _find_ignoring_case(pool, name)
        if tool is None:
            unknown.append(name)
        elif not (tool.should_defer and not tool.always_load):
            if tool.name not in available:
                available.append(tool.name)
        elif all(f.name != tool.name for f in found):
            found.append(_found(tool, options))
    return SearchOutcome("", tuple(found), tuple(available), tuple(unknown))


def _find_ignoring_case(pool: ToolPool, name: str) -> AnyTool | None:
    matches = [t for t in pool if t.name.lower() == name.lower()]
    return matches[0] if len(matches) == 1 else None


def _found(tool: AnyTool, options: ToolOptions) -> FoundTool:
    # A tool whose prompt or schema cannot be built still gets a result that says so,
    # rather than failing the whole search.
    try:
        description = tool.prompt(options) or tool.description
    except Exception:
        description = tool.description
    try:
        schema = tool.input_json_schema()
    except Exception as error:
        schema = {"error": f"the schema could not be built: {error}"}
    return FoundTool(tool.name, description, schema)


def _discover(names: frozenset[str]) -> ContextModifier:
    def add(context: ToolContext) -> ToolContext:
        options = context.options
        discovered = options.discovered_tools | names
        return context.replace(options=replace(options, discovered_tools=discovered))

    return add


# -- ranking -----------------------------------------------------------------------------------


def name_parts(name: str) -> tuple[str, ...]:
    """`mcp__github__create_issue` → (github, create, issue); `NotebookEdit` → (notebook, edit)."""
    parts: list[str] = []
    for chunk in re.split(r"[_\-\s.]+", name.removeprefix("mcp__")):
        parts.extend(p.lower() for p in _CAMEL.findall(chunk))
    return tuple(parts)


def search_terms(query: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(required terms, other terms): `+word` is required in the name."""
    required: list[str] = []
    optional: list[str] = []
    for token in query.split():
        bucket = required if token.startswith("+") else optional
        for word in _WORD.findall(token.lower()):
            if word not in _NOISE and word not in bucket:
                bucket.append(word)
    return tuple(required), tuple(optional)


def rank(tools: Iterable[AnyTool], query: str) -> list[AnyTool]:
    """The tools that match, best first (pool order among equals)."""
    required, optional = search_terms(query)
    whole = query.strip().lower()
    scored: list[tuple[int, int, AnyTool]] = []
    for index, tool in enumerate(tools):
        name = tool.name.lower()
        parts = name_parts(tool.name)
        if any(not _in_name(term, name, parts) for term in required):
            continue
        hint = tool.search_hint.lower()
        description = tool.description.lower()
        score = 20 if whole in (name, name.removeprefix("mcp__")) else 0
        for term in (*required, *optional):
            score += _score(term, name, parts, hint, description)
        if score > 0:
            scored.append((-score, index, tool))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [tool for _, _, tool in scored]


def _in_name(term: str, name: str, parts: tuple[str, ...]) -> bool:
    return term in parts or term in name


def _score(term: str, name: str, parts: tuple[str, ...], hint: str, description: str) -> int:
    score = 0
    if term in parts:
        score += 6
    elif len(term) >= 3 and term in name:
        score += 3
    hint_words = _WORD.findall(hint)
    if term in hint_words:
        score += 4
    elif len(term) >= 3 and term in hint:
        score += 2
    if term in _WORD.findall(description):
        score += 2
    elif len(term) >= 4 and term in description:
        score += 1
    return score


# -- output ------------------------------------------------------------------------------------


def render(data: SearchOutcome) -> str:
    parts: list[str] = []
    if data.found:
        parts.append(
            "<functions>\n"
            + "\n".join(
                "<function>"
                + json.dumps(
                    {"name": f.name, "description": f.description, "parameters": f.input_schema},
                    ensure_ascii=False,
                )
                + "</function>"
                for f in data.found
            )
            + "\n</functions>"
        )
        names = ", ".join(f.name for f in data.found)
        parts.append(f"Loaded: {names}. You can call them from your next message on.")
    if data.already_available:
        listed = ", ".join(data.already_available)
        parts.append(f"Already available (their definitions are in your tool list): {listed}.")
    if data.unknown:
        parts.append(f"No tool is called: {', '.join(data.unknown)}.")
    if not data.found and not data.already_available:
        if data.deferred:
            parts.append(
                f"No deferred tool matched {data.query!r}. Deferred tools: "
                f'{", ".join(data.deferred)}. Try other keywords, or "select:Name".'
            )
        else:
            parts.append(
                "No tools are deferred in this session: every tool's definition is already "
                "in your tool list."
            )
    return "\n\n".join(parts)


def deferred_tools_notice(pool: ToolPool, discovered: frozenset[str] = frozenset()) -> str:
    """The names-only listing of deferred tools not yet loaded, for the model's context;
    "" when there are none. (For the request builder: ToolSearch's own prompt stays fixed,
    so adding an MCP server never changes the bytes of the built-in tool definitions.)"""
    names = [t.name for t in pool.deferred() if t.name not in discovered]
    if not names:
        return ""
    return (
        "These tools are available but not loaded; load one with ToolSearch "
        '("select:Name") before calling it:\n' + "\n".join(names)
    )
