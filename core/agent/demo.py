"""The offline demo model: a scripted session served as genuine server-sent events.

`proctor --demo` must run with no key and no network, yet exercise the code a live run uses.
So nothing above the HTTP layer is faked: `DemoModel.handle` is an `httpx2.MockTransport`
handler under a real `anthropic.AsyncAnthropic`, and it answers POST /v1/messages with the
Messages API's own wire format (message_start, ping, content_block_start, text and
input_json deltas in small chunks, content_block_stop, message_delta, message_stop), paced
by `asyncio.sleep` inside the response body. The SDK parses, accumulates and retries exactly
as it would against the API, and the loop sees the same events.

Which turn to play is read from the request, not kept as a cursor: turn k is the reply to a
conversation holding k assistant messages. A retried request therefore replays its turn, and
turn k+1 plays only once turn k's tool results have been sent back. Where the script gives a
choice (scenario.py), it is read from the same request: the tool_results that answer the
previous assistant message say whether its calls ran, were denied or failed
(`core/access/call_outcome.py`), exactly as a real model would learn it. Replaying the
choices from the start also finds a path that ended (`end`). A conversation past the end of
its script, or of its path, gets a short reply saying this is the demo. Sub-agents (Task
calls with `agent_turns`) are told apart by their prompt, each with its own turn count.

A compaction's summary request is answered with the scenario's `summary`, marked with the
number of turns played so far, which the conversation after compaction carries: the count
goes on from there (scenario.py).

Faults (scenario.py) are served for the first `times` requests of their turn, so a loop that
retries gets through, as it would with a flaky API. Each request served is recorded in
`served` for tests.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import re
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import httpx2

from .demo_reading import (
    is_summary_request,
    plan_file_from,
    role,
    summary_mark,
    text_of,
    turn_to_play,
    turns_before_summary,
)
from .demo_thinking import (
    asks_for_thinking,
    redacted_data,
    signature_of,
    thinking_config_problem,
    thinking_problem,
    without_thinking,
)
from .scenario import (
    Choice,
    DropFault,
    ErrorEventFault,
    Fault,
    MaxTokensFault,
    OverloadedFault,
    RedactedThinkingBlock,
    Scenario,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Turn,
    TurnOutcome,
    step_turns,
)

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

DEMO_BASE_URL = "http://demo.invalid"
DEMO_API_KEY = "demo-key"
DEMO_MODEL = "claude-demo"
SAMPLE_PROJECT_DIR = Path(__file__).parent / "sample_project"
DEMO_WORKSPACE_PREFIX = "proctor-demo-"
"""A scratch copy's name in the temporary directory: the only folders the demo removes."""

END_OF_SCRIPT_REPLY = (
    "This is proctor's offline demo, and its script has run out, so I can't act on that. "
    "To work with a real model, set ANTHROPIC_API_KEY and run `proctor` without `--demo`."
)

SUB_AGENT_REPLY = (
    "I looked where I was asked to. (This is the offline demo: sub-agents without a script of "
    "their own give this reply.)"
)

# Pace, in seconds at speed 1.0: roughly what a fast model feels like on screen.
FIRST_TOKEN_DELAY = 0.35
CHUNK_DELAY = (0.03, 0.06)
OVERLOADED_RETRY_AFTER = 1.0

Outcome = Literal[
    "played", "overloaded", "error_event", "drop", "max_tokens", "past_end", "summary"
]

DEMO_SUMMARY = (
    "Summary (offline demo): the user asked for the scenario's task; the work so far is in "
    "the transcript, and the script carries on from here."
)


@dataclass(frozen=True, slots=True)
class Served:
    """One request the demo model answered, for tests and for the curious."""

    conversation: str
    """"main", or the id of the Task call whose sub-agent asked."""
    turn: int
    outcome: Outcome
    chose: TurnOutcome | None = None
    """For a turn that is a choice: the alternative played."""


@dataclass(frozen=True, slots=True)
class _Script:
    key: str
    id_prefix: str
    turns: list[Turn | Choice]


class DemoModel:
    """Plays `scenario` to whoever sends it Messages requests; see the module docstring.

    `speed` scales every delay: 1.0 is the default pace, 0.5 twice as fast, 0 no sleeping
    at all (tests). `plan_file` fills the `{plan_file}` placeholder; left None, the path is
    read from the EnterPlanMode result in the conversation, as a real model would.
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        workspace: Path,
        plan_file: Path | None = None,
        speed: float = 1.0,
    ) -> None:
        if speed < 0:
            raise ValueError(f"speed must be 0 or more, not {speed}")
        self.scenario = scenario
        self.workspace = workspace
        self.plan_file = plan_file
        self.speed = speed
        self.served: list[Served] = []
        self._faults_served: dict[tuple[str, int, TurnOutcome | None], int] = {}
        self._serial = itertools.count(1)
        self._main = _Script("main", "", scenario.turns)
        self._agents = dict(_agent_scripts(scenario.turns, prefix=""))

    # -- the SDK client ------------------------------------------------------------------

    def client(self, *, max_retries: int | None = None) -> AsyncAnthropic:
        """A real SDK client whose every request is answered in process by this model.

        `max_retries` None keeps the SDK's default, so its own retry of a 529 is exercised.
        """
        import anthropic

        http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(self.handle))
        return anthropic.AsyncAnthropic(
            api_key=DEMO_API_KEY,
            base_url=DEMO_BASE_URL,
            http_client=http_client,
            max_retries=anthropic.DEFAULT_MAX_RETRIES if max_retries is None else max_retries,
        )

    # -- the transport handler -----------------------------------------------------------

    async def handle(self, request: httpx2.Request) -> httpx2.Response:
        serial = next(self._serial)
        request_id = f"req_demo_{serial:04d}"
        path = request.url.path.rstrip("/")
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            return _error(404, "not_found_error", f"Not found: {request.url.path}", request_id)
        if request.method != "POST":
            return _error(405, "invalid_request_error", "Use POST.", request_id)
        try:
            body = json.loads(request.content or b"null")
        except ValueError:
            return _error(400, "invalid_request_error", "The body is not JSON.", request_id)
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or not messages:
            return _error(
                400, "invalid_request_error", "messages: a non-empty list is required.", request_id
            )
        input_tokens = max(1, len(request.content) // 4)
        if path.endswith("count_tokens"):
            return httpx2.Response(
                200, json={"input_tokens": input_tokens}, headers={"request-id": request_id}
            )
        window = self.scenario.context_window
        if window is not None and input_tokens > window:
            # The API's own refusal, so the loop's compaction of a refused request is real.
            message = f"prompt is too long: {input_tokens} tokens > {window} maximum"
            return _error(400, "invalid_request_error", message, request_id)
        if body.get("stream") is not True:
            return _error(
                400,
                "invalid_request_error",
                "The offline demo model only streams: use messages.stream().",
                request_id,
            )

        problem = thinking_config_problem(body) or thinking_problem(messages)
        if problem is not None:  # as the API: thinking must come back exactly as it was sent
            return _error(400, "invalid_request_error", problem, request_id)
        script = self._script_for(messages)
        earlier = turns_before_summary(messages)
        turn_index = earlier + sum(1 for message in messages if role(message) == "assistant")
        model = str(body.get("model") or DEMO_MODEL)
        chosen = turn_to_play(script.turns, messages, turn_index, earlier=earlier)
        fault: Fault | None = None
        if is_summary_request(messages):
            self.served.append(Served(script.key, turn_index, "summary"))
            text = f"{self.scenario.summary or DEMO_SUMMARY}\n\n" + summary_mark(turn_index)
            turn = Turn(blocks=[TextBlock(type="text", text=text)])
        elif chosen is None:
            self.served.append(Served(script.key, turn_index, "past_end"))
            turn = Turn(blocks=[TextBlock(type="text", text=END_OF_SCRIPT_REPLY)])
        else:
            turn, chose = chosen
            fault = self._take_fault((script.key, turn_index, chose), turn.fault)
            outcome: Outcome = "played" if fault is None else fault.kind
            self.served.append(Served(script.key, turn_index, outcome, chose))
        if isinstance(fault, OverloadedFault):
            response = _error(529, "overloaded_error", "Overloaded", request_id)
            # The API's own hint; scaled, so the SDK's retry is quick in tests.
            retry_after_ms = max(1, round(OVERLOADED_RETRY_AFTER * 1000 * self.speed))
            response.headers["retry-after-ms"] = str(retry_after_ms)
            response.headers["x-should-retry"] = "true"
            return response

        replacements = self._replacements(messages)
        frames = _frames(
            turn if asks_for_thinking(body) else without_thinking(turn),
            fault=fault,
            ids=f"toolu_demo_{script.id_prefix}{turn_index}",
            message_id=f"msg_demo_{serial:04d}",
            model=model,
            input_tokens=input_tokens,
            replacements=replacements,
            rng=random.Random(f"{script.key}/{turn_index}"),
            speed=self.speed,
        )
        return httpx2.Response(
            200,
            headers={"content-type": "text/event-stream", "request-id": request_id},
            content=_paced(frames, request),
        )

    def _script_for(self, messages: list[Any]) -> _Script:
        first = text_of(messages[0])
        for prompt, script in self._agents.items():
            if prompt == first:
                return script
        # The Task tool may wrap the prompt in context of its own.
        matches = [prompt for prompt in self._agents if prompt in first]
        return self._agents[max(matches, key=len)] if matches else self._main

    def _take_fault(
        self, where: tuple[str, int, TurnOutcome | None], fault: Fault | None
    ) -> Fault | None:
        if fault is None:
            return None
        count = self._faults_served.get(where, 0)
        if count >= fault.times:
            return None
        self._faults_served[where] = count + 1
        return fault

    def _replacements(self, messages: list[Any]) -> dict[str, str]:
        plan_file = self.plan_file or plan_file_from(messages)
        if plan_file is None:
            plan_file = self.workspace / "plan.md"
        return {"{workspace}": str(self.workspace), "{plan_file}": str(plan_file)}


# -- the sample project ------------------------------------------------------------------


def copy_sample_project(dest: Path) -> Path:
    """Copy the shipped sample project to `dest` (absent or empty); returns it resolved.

    The project's `build/` directory is made here rather than shipped: it is gitignored,
    in proctor's repository as in the sample, and the demo uses it to show that searches
    skip ignored files. The copy's `.mcp.json` runs the sample's MCP server with proctor's
    own Python, which has the MCP SDK (the `python3` on PATH may not).
    """
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty; the sample project needs an empty directory")
    shutil.copytree(
        SAMPLE_PROJECT_DIR,
        dest,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "build"),
        dirs_exist_ok=True,
    )
    stale = dest / "build" / "lib" / "textstats"
    stale.mkdir(parents=True)
    shutil.copy2(dest / "textstats" / "counts.py", stale / "counts.py")
    _use_own_python(dest / ".mcp.json")
    return dest.resolve()


def _use_own_python(config: Path) -> None:
    data = json.loads(config.read_text())
    for server in data.get("mcpServers", {}).values():
        if server.get("command") == "python3":
            server["command"] = sys.executable
    config.write_text(json.dumps(data, indent=2) + "\n")


def demo_workspace(scenario: Scenario, cwd: Path | None = None) -> Path:
    """Where `scenario` runs: the working directory, or a fresh scratch copy of the sample."""
    if scenario.workspace == "cwd":
        return (cwd or Path.cwd()).resolve()
    return copy_sample_project(Path(tempfile.mkdtemp(prefix=DEMO_WORKSPACE_PREFIX)).resolve())


# -- building the stream -----------------------------------------------------------------

Frame = tuple[float, bytes | None]
"""The delay before a frame, and its bytes; None bytes break the connection instead."""


def _frames(
    turn: Turn,
    *,
    fault: Fault | None,
    ids: str,
    message_id: str,
    model: str,
    input_tokens: int,
    replacements: Mapping[str, str],
    rng: random.Random,
    speed: float,
) -> list[Frame]:
    """Every frame of one streamed message, with the delay before each."""

    def pause() -> float:
        return rng.uniform(*CHUNK_DELAY) * speed

    frames: list[Frame] = [
        (
            FIRST_TOKEN_DELAY * speed,
            _sse("message_start", _message_start(message_id, model, input_tokens)),
        ),
        (0.0, _sse("ping", {"type": "ping"})),
    ]
    break_after = fault.after_blocks if isinstance(fault, (ErrorEventFault, DropFault)) else None
    cut_at = _cut_block(turn) if isinstance(fault, MaxTokensFault) else None
    output_tokens = 0
    used_tools = False
    for index, block in enumerate(turn.blocks):
        if index == break_after:
            frames.append(_fault_frame(fault, pause()))
            return frames
        delay = block.pace_ms / 1000 * speed if block.pace_ms is not None else pause()
        signature: str | None = None
        if isinstance(block, TextBlock):
            start: dict[str, Any] = {"type": "text", "text": ""}
            pieces = list(_text_chunks(block.text, rng))
            kind, field = "text_delta", "text"
        elif isinstance(block, ThinkingBlock):
            start = {"type": "thinking", "thinking": "", "signature": ""}
            pieces = list(_text_chunks(block.thinking, rng))
            kind, field = "thinking_delta", "thinking"
            signature = signature_of(block.thinking)
        elif isinstance(block, RedactedThinkingBlock):
            start = {"type": "redacted_thinking", "data": redacted_data(f"{ids}_{index}")}
            pieces, kind, field = [], "", ""
        else:
            used_tools = True
            tool_input = _fill(block.input, replacements)
            start = {"type": "tool_use", "id": f"{ids}_{index}", "name": block.name, "input": {}}
            pieces = list(_json_chunks(json.dumps(tool_input, ensure_ascii=False), rng))
            kind, field = "input_json_delta", "partial_json"
        if index == cut_at:
            pieces = _truncate(pieces)
        frames.append(
            (
                delay,
                _sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                ),
            )
        )
        for piece in pieces:
            output_tokens += max(1, len(piece) // 4)
            delta = {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": kind, field: piece},
            }
            frames.append((pause(), _sse("content_block_delta", delta)))
        if signature is not None:  # the API sends a thinking block's signature last
            delta = {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "signature_delta", "signature": signature},
            }
            frames.append((0.0, _sse("content_block_delta", delta)))
        frames.append(
            (0.0, _sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        )
        if index == cut_at:
            break
    if break_after == len(turn.blocks):
        frames.append(_fault_frame(fault, pause()))
        return frames
    stop_reason = "max_tokens" if cut_at is not None else "tool_use" if used_tools else "end_turn"
    message_delta = {
        "type": "message_delta",
        "delta": {"type": "message_delta", "stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }
    frames.append((pause(), _sse("message_delta", message_delta)))
    frames.append((0.0, _sse("message_stop", {"type": "message_stop"})))
    return frames


def _message_start(message_id: str, model: str, input_tokens: int) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": 1,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        },
    }


def _fault_frame(fault: Fault | None, delay: float) -> Frame:
    if isinstance(fault, ErrorEventFault):
        error = {"type": "error", "error": {"type": fault.error_type, "message": fault.message}}
        return (delay, _sse("error", error))
    return (delay, None)  # no bytes: the connection breaks here


def _cut_block(turn: Turn) -> int:
    """The block max_tokens cuts: the last tool_use, else the last block."""
    tools = [i for i, block in enumerate(turn.blocks) if isinstance(block, ToolUseBlock)]
    return tools[-1] if tools else len(turn.blocks) - 1


def _truncate(pieces: list[str]) -> list[str]:
    """The first half of the text the pieces make, cut mid-piece if need be."""
    whole = "".join(pieces)
    keep = max(1, len(whole) // 2)
    out: list[str] = []
    for piece in pieces:
        if keep <= 0:
            break
        out.append(piece[:keep])
        keep -= len(piece)
    return out


def _text_chunks(text: str, rng: random.Random) -> Iterator[str]:
    """A few words at a time, whitespace kept, as a model's tokens arrive."""
    words = re.findall(r"\s*\S+", text)
    tail = text[len("".join(words)) :]
    if tail or not words:
        words.append(tail)
    while words:
        take = rng.randint(1, 4)
        yield "".join(words[:take])
        words = words[take:]


def _json_chunks(text: str, rng: random.Random) -> Iterator[str]:
    """Arbitrary 20-40 character slices: the SDK must accumulate partial JSON, not parse it."""
    start = 0
    while start < len(text):
        end = start + rng.randint(20, 40)
        yield text[start:end]
        start = end


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event}\ndata: {payload}\n\n".encode()


async def _paced(frames: list[Frame], request: httpx2.Request) -> AsyncIterator[bytes]:
    for delay, data in frames:
        if delay > 0:
            await asyncio.sleep(delay)
        if data is None:
            # What httpx2 raises when the peer goes away mid-body.
            raise httpx2.ReadError("the demo model dropped the connection", request=request)
        yield data


def _error(status: int, error_type: str, message: str, request_id: str) -> httpx2.Response:
    body = {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id,
    }
    return httpx2.Response(status, json=body, headers={"request-id": request_id})


def _fill(value: Any, replacements: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for placeholder, actual in replacements.items():
            value = value.replace(placeholder, actual)
        return value
    if isinstance(value, dict):
        return {key: _fill(item, replacements) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item, replacements) for item in value]
    return value


def _agent_scripts(steps: list[Turn | Choice], prefix: str) -> Iterator[tuple[str, _Script]]:
    """Every Task call's sub-agent script, nested ones too, keyed by the Task's prompt."""
    for turn_index, step in enumerate(steps):
        blocks = [(i, block) for turn in step_turns(step) for i, block in enumerate(turn.blocks)]
        for block_index, block in blocks:
            if not isinstance(block, ToolUseBlock) or not isinstance(
                block.input.get("prompt"), str
            ):
                continue
            if block.agent_turns is None and block.name != "Task":
                continue
            tag = f"{prefix}{turn_index}_{block_index}_"
            key = f"toolu_demo_{prefix}{turn_index}_{block_index}"
            # Without a script a sub-agent still must not replay the main session.
            agent_turns = block.agent_turns or [
                Turn(blocks=[TextBlock(type="text", text=SUB_AGENT_REPLY)])
            ]
            yield block.input["prompt"], _Script(key, tag, agent_turns)
            yield from _agent_scripts(agent_turns, tag)
