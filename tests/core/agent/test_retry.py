"""Retries as a person meets them: the server's retry-after obeyed, backoff with jitter, the
broken stream's text withdrawn, a call cut off by max_tokens shown as not run; and the
client's credentials and endpoint from the environment.

Every request goes through the real SDK to the demo model's in-process transport; nothing
sleeps: the loop is given a sleep that records the delay it was asked for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
from engine_helpers import make_services

from core.abort import AbortSignal
from core.access.context import ToolPermissionContext
from core.agent.demo import DEMO_MODEL, DemoModel, copy_sample_project
from core.agent.loop import AgentLoop, AssistantMessage, Retrying, TextDelta, TurnError
from core.agent.model import (
    MissingApiKey,
    ModelClient,
    RetryPolicy,
    classify_failure,
    has_credentials,
    retry_after,
)
from core.agent.scenario import parse_scenario
from core.app_state import AppState, AppStateStore
from core.events import EngineEvent, EventRecorder, ToolCancelled, ToolQueued
from core.registry import assemble_tool_pool
from core.tool import ToolContext, ToolOptions

BYPASS = ToolPermissionContext(mode="bypassPermissions", bypass_available=True)


@dataclass
class Run:
    loop: AgentLoop
    demo: DemoModel
    recorder: EventRecorder
    workspace: Path
    slept: list[float] = field(default_factory=list)
    requests: list[httpx2.Request] = field(default_factory=list)

    def of(self, kind: type[EngineEvent]) -> list[Any]:
        return [e for e in self.recorder.events if isinstance(e, kind)]


def run_of(
    tmp_path: Path,
    *turns: Any,
    refusals: list[tuple[int, dict[str, str]]] = (),  # type: ignore[assignment]
    policy: RetryPolicy | None = None,
) -> Run:
    """A loop on the demo model whose first requests are refused with `refusals` (status,
    headers), and whose sleeps are recorded instead of waited."""
    scenario = parse_scenario(json.dumps({"name": "t", "turns": list(turns)}))
    workspace = copy_sample_project(tmp_path / "workspace")
    demo = DemoModel(scenario, workspace=workspace, speed=0)
    pending = list(refusals)
    serve = demo.handle
    requests: list[httpx2.Request] = []

    async def handle(request: httpx2.Request) -> httpx2.Response:
        requests.append(request)
        if pending:
            status, headers = pending.pop(0)
            kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
            body = {"type": "error", "error": {"type": kind, "message": "slow down"}}
            return httpx2.Response(status, json=body, headers=headers)
        return await serve(request)

    demo.handle = handle  # type: ignore[method-assign]
    pool = assemble_tool_pool(BYPASS)
    context = ToolContext(
        cwd=workspace,
        app_state=AppStateStore(AppState(permission_context=BYPASS)),
        options=ToolOptions(tools=pool, model=DEMO_MODEL, session_dir=tmp_path / "s"),
    )
    recorder = EventRecorder()
    slept: list[float] = []

    async def sleep(delay: float, signal: AbortSignal) -> bool:
        slept.append(delay)
        return signal.aborted

    loop = AgentLoop(
        ModelClient(demo.client(max_retries=0), model=DEMO_MODEL),
        make_services(recorder, session_dir=tmp_path / "s"),
        context,
        retry=policy or RetryPolicy(max_attempts=5, draw=lambda: 0.5),
        sleep=sleep,
    )
    return Run(loop, demo, recorder, workspace, slept, requests)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": tool_input}


# -- how long a retry waits ------------------------------------------------------------------


async def test_a_429_waits_as_long_as_the_server_says(tmp_path: Path) -> None:
    r = run_of(
        tmp_path,
        [text("answered at last")],
        refusals=[(429, {"retry-after-ms": "1500"}), (429, {"retry-after": "7"})],
    )
    ended = await r.loop.send("go")
    assert ended.stop_reason == "end_turn"
    assert r.slept == [1.5, 7.0]
    retries = r.of(Retrying)
    assert [e.delay_s for e in retries] == [1.5, 7.0]
    assert retries[0].describe() == "rate limited (429), retrying in 1.5 s (2/5)"


async def test_529_and_5xx_honour_retry_after_too_and_a_huge_one_is_capped(
    tmp_path: Path,
) -> None:
    r = run_of(
        tmp_path,
        [text("ok")],
        refusals=[(529, {"retry-after": "3"}), (503, {"retry-after": "3600"})],
    )
    await r.loop.send("go")
    assert r.slept == [3.0, 60.0]


async def test_without_retry_after_the_backoff_doubles_with_jitter(tmp_path: Path) -> None:
    draws = iter([0.0, 1.0 - 1e-9, 0.5])
    policy = RetryPolicy(max_attempts=5, base_delay_s=2, draw=lambda: next(draws))
    r = run_of(tmp_path, [text("ok")], refusals=[(529, {})] * 3, policy=policy)
    await r.loop.send("go")
    # 2 s, then 4 s with up to a quarter more, then 8 s with an eighth more.
    assert r.slept == pytest.approx([2.0, 5.0, 9.0])


async def test_unreadable_retry_after_falls_back_to_the_backoff(tmp_path: Path) -> None:
    r = run_of(tmp_path, [text("ok")], refusals=[(429, {"retry-after": "soon, maybe"})])
    await r.loop.send("go")
    assert r.slept == [1.125]  # base 1 s plus a quarter of a 0.5 draw


async def test_the_server_has_the_last_word_on_whether_to_retry(tmp_path: Path) -> None:
    refused = run_of(tmp_path / "a", [text("x")], refusals=[(529, {"x-should-retry": "false"})])
    assert (await refused.loop.send("go")).stop_reason == "error"
    assert refused.slept == [] and "529" in refused.of(TurnError)[0].message
    asked = run_of(
        tmp_path / "b",
        [text("ok")],
        refusals=[(409, {"x-should-retry": "true", "retry-after": "2"})],
    )
    assert (await asked.loop.send("go")).stop_reason == "end_turn"
    assert asked.slept == [2.0]
    assert asked.of(Retrying)[0].error == "the API asked for a retry (409)"


def test_retry_after_reads_milliseconds_seconds_and_http_dates() -> None:
    now = 1_445_412_480.0  # Wed, 21 Oct 2015 07:28:00 GMT
    assert retry_after({"retry-after-ms": "250"}, now) == 0.25
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}, now) == 0.25
    assert retry_after({"retry-after": "2.5"}, now) == 2.5
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}, now) == 30
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:27:00 GMT"}, now) == 0
    assert retry_after({"retry-after": "-4"}, now) is None
    assert retry_after({"retry-after": "nan"}, now) is None
    assert retry_after({}, now) is None


def test_an_http_date_is_read_against_the_injected_clock() -> None:
    import anthropic

    request = httpx2.Request("POST", "http://x/v1/messages")
    headers = {"retry-after": "Wed, 21 Oct 2015 07:28:12 GMT"}
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "m"}}
    response = httpx2.Response(429, json=body, headers=headers, request=request)
    error = anthropic.RateLimitError("m", response=response, body=body)
    failure = classify_failure(error, now=lambda: 1_445_412_480.0)
    assert failure.action == "retry" and failure.retry_after_s == 12


# -- what the person sees of a retried stream --------------------------------------------------


async def test_a_dropped_stream_withdraws_the_text_it_had_shown(tmp_path: Path) -> None:
    said = "Let me look at the README first."
    r = run_of(
        tmp_path,
        {
            "fault": {"kind": "drop", "after_blocks": 1},
            "blocks": [text(said), tool("Glob", pattern="*.md")],
        },
        [text("done")],
    )
    await r.loop.send("go")
    (retry,) = r.of(Retrying)
    assert retry.discarded_text == said
    assert retry.describe().startswith("the connection dropped, retrying in")
    assert retry.describe().endswith("(2/5)")
    # What streamed after the retry is the answer, once: the withdrawn part plus it.
    streamed = "".join(e.text for e in r.of(TextDelta))
    assert streamed == said + said + "done"
    first = r.of(AssistantMessage)[0]
    assert [b["text"] for b in first.content if b["type"] == "text"] == [said]


async def test_retries_that_never_succeed_end_the_turn_with_the_count(tmp_path: Path) -> None:
    r = run_of(tmp_path, [text("never")], refusals=[(529, {"retry-after": "1"})] * 9)
    ended = await r.loop.send("go")
    assert ended.stop_reason == "error"
    assert r.slept == [1.0] * 4
    assert "gave up after 5 tries" in r.of(TurnError)[0].message


# -- a call cut off by max_tokens ----------------------------------------------------------------


async def test_a_call_cut_off_by_max_tokens_is_a_line_that_says_it_did_not_run(
    tmp_path: Path,
) -> None:
    r = run_of(
        tmp_path,
        {
            "fault": {"kind": "max_tokens"},
            "blocks": [
                tool(
                    "Write",
                    file_path="{workspace}/NOTES.md",
                    content="# Notes\n\nLong enough that cutting its JSON in half cuts this.\n",
                )
            ],
        },
        [text("I will write it in parts.")],
    )
    await r.loop.send("go")
    assert not (r.workspace / "NOTES.md").exists()
    (queued,) = r.of(ToolQueued)
    (cancelled,) = r.of(ToolCancelled)
    assert queued.tool_name == "Write" and cancelled.tool_use_id == queued.tool_use_id
    assert cancelled.reason == "cut_off"
    assert cancelled.message.startswith("not run: the response was cut off")
    result = r.loop.messages[2]["content"][0]
    assert result["tool_use_id"] == queued.tool_use_id
    assert result["is_error"] and "max_tokens" in result["content"]


# -- credentials and endpoint ------------------------------------------------------------------


async def _one_request(env: dict[str, str], workspace: Path) -> httpx2.Request:
    """Stream one answer through a client built from `env`; the request it made."""
    scenario = parse_scenario(json.dumps({"name": "t", "turns": [[text("hi")]]}))
    demo = DemoModel(scenario, workspace=workspace, speed=0)
    seen: list[httpx2.Request] = []

    async def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return await demo.handle(request)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handle))
    client = ModelClient.from_env(DEMO_MODEL, env=env, http_client=http)
    messages = [{"role": "user", "content": "hello"}]
    async with client.stream(system=[], messages=messages, tools=[]) as stream:
        await stream.get_final_message()
    return seen[0]


async def test_an_auth_token_is_sent_as_a_bearer_token_to_the_base_url(tmp_path: Path) -> None:
    env = {"ANTHROPIC_AUTH_TOKEN": "gateway-token", "ANTHROPIC_BASE_URL": "http://gw.test:8080"}
    request = await _one_request(env, tmp_path)
    assert request.headers["authorization"] == "Bearer gateway-token"
    assert str(request.url) == "http://gw.test:8080/v1/messages"


async def test_the_api_key_wins_over_a_token_as_in_the_sdk(tmp_path: Path) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-key", "ANTHROPIC_AUTH_TOKEN": "gateway-token"}
    request = await _one_request(env, tmp_path)
    sent = " ".join(request.headers.values())
    assert "sk-ant-key" in sent and "gateway-token" not in sent
    assert request.url.host == "api.anthropic.com"


def test_without_key_or_token_the_message_names_both() -> None:
    with pytest.raises(MissingApiKey) as raised:
        ModelClient.from_env("m", env={"ANTHROPIC_API_KEY": "  "})
    assert "ANTHROPIC_API_KEY" in str(raised.value)
    assert "ANTHROPIC_AUTH_TOKEN" in str(raised.value)
    assert has_credentials({"ANTHROPIC_AUTH_TOKEN": "t"})
    assert not has_credentials({"ANTHROPIC_BASE_URL": "http://x"})
