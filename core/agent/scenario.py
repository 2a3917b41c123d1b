"""Scenario files: scripted sessions the offline demo model plays, as data.

A scenario is a JSON object:

    {"name": "default", "description": "...", "prompt": "...", "workspace": "sample",
     "turns": [[block, ...], {"blocks": [block, ...], "fault": {...}}, ...]}

Each turn is one assistant message, written either as a bare list of blocks or, when it needs
a fault injected, as `{"blocks": [...], "fault": {...}}`. A block is `{"type": "text",
"text": ...}` or `{"type": "tool_use", "name": ..., "input": {...}}`; either may carry
`pace_ms`, the delay before it starts streaming. A turn may open with `{"type": "thinking",
"thinking": ...}` (or `{"type": "redacted_thinking"}`): played only when the request asks
for thinking, signed, and checked when it comes back. String values in tool inputs may use the
placeholders `{workspace}` and `{plan_file}`, which the demo model fills in when it plays the
turn (Read, Write and Edit need absolute paths, which a data file cannot know).

Faults exist for the agent loop's tests, which need the malformed streams a live API
produces now and then. Each applies to the first `times` requests for its turn; after that
the turn plays cleanly, so a loop that retries gets through.

A `Task` tool_use may carry `agent_turns`: the script its sub-agent plays. The demo model
recognises the sub-agent's conversation by the Task's `prompt` in its first user message.

What the agent says must be true whatever the person answered, so a turn may instead be a
choice, `{"when": {"all_ran": turn, "denied": turn, "failed": turn}}`, made by what happened
to the previous turn's calls, as read from the tool_results the demo model is sent
(`core/access/call_outcome.py`): `denied` when any call was denied (by a rule, a hook, the
mode, the person, or nobody there to approve it) or the person said no to what it put before
them (kept planning, declined the questions); else `failed` when any call failed or was
cancelled; else `all_ran`. So the precedence is denied > failed > all_ran. All three are
required: an outcome without words of its own would borrow words that may not be true. A
turn with no calls before it (the first, or one after text alone) cannot choose.

A turn marked `"end": true` ends the script: the conversation's next request gets the
demo's end-of-script reply, not the next turn. That is how a path that went differently
stops truthfully instead of carrying on with a story that no longer holds. It takes no
calls (the loop would only ask again at once).

Two keys serve compaction (`--scenario long`): `context_window`, the demo model's window in
tokens, small so that the scenario fills it; and `summary`, the demo model's answer to a
summary request (compaction.py's prompt), which it recognises in the request. After a
compaction the conversation holds fewer assistant messages, so the summary carries the
number of turns played before it (`[demo: N turns before this summary]`), and the demo
model counts from there.

The models are strict (`extra="forbid"`): a misspelt key in a hand-written scenario should
be an error naming the field, not a silently ignored pacing or fault.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    model_validator,
)

SCENARIOS_DIR = Path(__file__).parent / "scenarios"
PLACEHOLDERS = ("{workspace}", "{plan_file}")


class ScenarioError(ValueError):
    """A scenario that cannot be found or read; the message names the file and the problem."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TextBlock(_Strict):
    type: Literal["text"]
    text: str = Field(min_length=1)
    pace_ms: int | None = Field(default=None, ge=0)


class ToolUseBlock(_Strict):
    type: Literal["tool_use"]
    name: str = Field(min_length=1)
    input: dict[str, Any] = Field(default_factory=dict)
    pace_ms: int | None = Field(default=None, ge=0)
    agent_turns: list[Step] | None = None
    """For a Task call: the turns its sub-agent plays."""

    @model_validator(mode="after")
    def _agent_turns_need_a_prompt(self) -> ToolUseBlock:
        if self.agent_turns is not None and not isinstance(self.input.get("prompt"), str):
            # The prompt is how the demo model tells the sub-agent's requests apart.
            raise ValueError("agent_turns needs a string `prompt` in the input")
        if self.agent_turns is not None:
            _check_choices(self.agent_turns, "agent_turns")
        return self


class ThinkingBlock(_Strict):
    """The model's thinking, streamed only to a request that asks for thinking (as a real
    model does); the demo signs it, and refuses a conversation that sends it back altered."""

    type: Literal["thinking"]
    thinking: str = Field(min_length=1)
    pace_ms: int | None = Field(default=None, ge=0)


class RedactedThinkingBlock(_Strict):
    """Thinking the API hands over encrypted: no text to show, only a block to send back."""

    type: Literal["redacted_thinking"]
    pace_ms: int | None = Field(default=None, ge=0)


Block = Annotated[
    TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock, Field(discriminator="type")
]


class OverloadedFault(_Strict):
    """HTTP 529 with an overloaded_error body, `times` times before the turn plays."""

    kind: Literal["overloaded"]
    times: int = Field(default=1, ge=1)


class ErrorEventFault(_Strict):
    """An SSE `error` event after `after_blocks` complete blocks; the stream then ends."""

    kind: Literal["error_event"]
    after_blocks: int = Field(default=0, ge=0)
    times: int = Field(default=1, ge=1)
    error_type: str = "overloaded_error"
    message: str = "Overloaded"


class DropFault(_Strict):
    """The connection breaks (a read error) after `after_blocks` complete blocks."""

    kind: Literal["drop"]
    after_blocks: int = Field(default=0, ge=0)
    times: int = Field(default=1, ge=1)


class MaxTokensFault(_Strict):
    """The last tool_use's input JSON (else the last text) is cut; stop_reason max_tokens."""

    kind: Literal["max_tokens"]
    times: int = Field(default=1, ge=1)


Fault = Annotated[
    OverloadedFault | ErrorEventFault | DropFault | MaxTokensFault, Field(discriminator="kind")
]


class Turn(_Strict):
    blocks: list[Block] = Field(min_length=1)
    fault: Fault | None = None
    end: bool = Field(default=False, strict=True)
    """The script ends after this turn (see the module docstring)."""

    @property
    def has_calls(self) -> bool:
        return any(isinstance(block, ToolUseBlock) for block in self.blocks)

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, data: Any) -> Any:
        # The common case is written without ceremony: a turn is just its blocks.
        return {"blocks": data} if isinstance(data, list) else data

    @model_validator(mode="after")
    def _fault_fits(self) -> Turn:
        after = getattr(self.fault, "after_blocks", None)
        if after is not None and after > len(self.blocks):
            raise ValueError(
                f"fault.after_blocks is {after} but the turn has {len(self.blocks)} block(s)"
            )
        if self.end and self.has_calls:
            raise ValueError("a turn with `end` cannot make calls: their results would go unread")
        return self


TurnOutcome = Literal["all_ran", "denied", "failed"]
"""What happened to a turn's calls, as a choice reads it (precedence: denied, failed)."""


class Alternatives(_Strict):
    all_ran: Turn
    denied: Turn
    failed: Turn


class Choice(_Strict):
    """A turn chosen by what happened to the previous turn's calls."""

    when: Alternatives

    def turn_for(self, outcome: TurnOutcome) -> Turn:
        turn: Turn = getattr(self.when, outcome)
        return turn

    @property
    def turns(self) -> tuple[Turn, ...]:
        return (self.when.all_ran, self.when.denied, self.when.failed)


def _step_kind(data: Any) -> str:
    if isinstance(data, Choice) or (isinstance(data, dict) and "when" in data):
        return "when"
    return "turn"


Step = Annotated[
    Annotated[Turn, Tag("turn")] | Annotated[Choice, Tag("when")], Discriminator(_step_kind)
]
"""One place in a script: a turn, or a choice of turns."""


def step_turns(step: Turn | Choice) -> tuple[Turn, ...]:
    """Every turn a step may play."""
    return step.turns if isinstance(step, Choice) else (step,)


def _check_choices(steps: list[Turn | Choice], where: str) -> None:
    """A choice needs calls before it whose outcome it can read."""
    for index, step in enumerate(steps):
        if not isinstance(step, Choice):
            continue
        if index == 0:
            raise ValueError(
                f"{where}[0].when: the first turn has no earlier calls to choose by; "
                "write it as a plain turn"
            )
        before = steps[index - 1]
        if not any(turn.has_calls for turn in step_turns(before)):
            raise ValueError(
                f"{where}[{index}].when: turn {index - 1} makes no calls, so there is nothing "
                "to choose by; write it as a plain turn"
            )
        if isinstance(before, Choice):
            # A path that goes on from text alone would reach this choice with no calls to
            # read, and "all_ran" would speak for calls that were never made.
            for outcome in ("all_ran", "denied", "failed"):
                turn = getattr(before.when, outcome)
                if not turn.has_calls and not turn.end:
                    raise ValueError(
                        f"{where}[{index - 1}].when.{outcome}: it makes no calls, so the "
                        f"choice after it would have nothing to choose by; give it calls or "
                        '"end": true'
                    )


class Scenario(_Strict):
    name: str = Field(min_length=1)
    description: str = ""
    prompt: str | None = None
    """The user prompt the demo starts with."""
    workspace: Literal["sample", "cwd"] = "sample"
    """"sample": a scratch copy of the shipped sample project; "cwd": the current directory."""
    turns: list[Step] = Field(min_length=1)
    context_window: int | None = Field(default=None, ge=1000)
    """The demo model's context window in tokens, when the scenario wants it smaller."""
    summary: str | None = Field(default=None, min_length=1)
    """What the demo model answers a compaction's summary request with."""

    @model_validator(mode="after")
    def _choices_fit(self) -> Scenario:
        _check_choices(self.turns, "turns")
        return self


ToolUseBlock.model_rebuild()


def list_scenarios() -> list[str]:
    """Names of the scenarios shipped with proctor, sorted."""
    return sorted(path.stem for path in SCENARIOS_DIR.glob("*.json"))


def load_scenario(name_or_path: str | Path) -> Scenario:
    """A shipped scenario by name ("default"), or a scenario file by path."""
    path = _locate(name_or_path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: cannot read the scenario: {exc}") from exc
    return parse_scenario(text, source=str(path))


def parse_scenario(text: str, *, source: str = "<scenario>") -> Scenario:
    """Validate scenario JSON; errors name `source` and the line or field at fault."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{source}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from exc
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        problems = [_describe(error) for error in exc.errors()]
        shown = "\n".join(f"  {problem}" for problem in problems[:8])
        more = f"\n  ... and {len(problems) - 8} more" if len(problems) > 8 else ""
        raise ScenarioError(f"{source}: invalid scenario:\n{shown}{more}") from exc


def _locate(name_or_path: str | Path) -> Path:
    text = str(name_or_path)
    looks_like_path = (
        isinstance(name_or_path, Path) or text.endswith(".json") or "/" in text or "\\" in text
    )
    if looks_like_path:
        path = Path(text).expanduser()
        if not path.is_file():
            raise ScenarioError(f"{path}: no such scenario file")
        return path
    shipped = SCENARIOS_DIR / f"{text}.json"
    if not shipped.is_file():
        names = ", ".join(list_scenarios()) or "(none)"
        raise ScenarioError(
            f"no scenario named {text!r}; shipped scenarios: {names} "
            "(or give the path to a .json file)"
        )
    return shipped


_TAGS = frozenset(
    {
        "text",
        "tool_use",
        "thinking",
        "redacted_thinking",
        "overloaded",
        "error_event",
        "drop",
        "max_tokens",
        "turn",
        "when",
    }
)


def _describe(error: Any) -> str:
    """One pydantic error as `turns[2].blocks[0].type: message`."""
    loc = list(error["loc"])
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        # pydantic stops at the union; the user wrote the bad tag one level down.
        tag = error.get("ctx", {}).get("discriminator", "")
        loc.append(tag.strip("'"))
    path = ""
    previous: object = None
    for part in loc:
        # pydantic puts a tagged union's tag in the path (blocks[1].text.text); the user
        # never wrote it, so it goes.
        if part in _TAGS and (isinstance(previous, int) or previous == "fault"):
            previous = part
            continue
        previous = part
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    message = str(error["msg"]).removeprefix("Value error, ")
    if _NAMES_ITS_PLACE.match(message):  # a check over a list of turns names the turn itself
        return f"{path}.{message}" if path else message
    return f"{path or '(top level)'}: {message}"


_NAMES_ITS_PLACE = re.compile(r"(?:turns|agent_turns)\[\d+\]\S*: ")
