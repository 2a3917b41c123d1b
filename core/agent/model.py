"""The model client: one streamed Messages request, and what to do when it fails.

`ModelClient` wraps an `anthropic.AsyncAnthropic` it is given, so the same code streams from
the API and from the offline demo model (demo.py: the real SDK over an in-process transport).
It does not retry by itself: a retry must throw away the tool calls a broken stream started,
which only the loop can do, and the user must see every retry ("retrying in 4 s"). So
`from_env` builds the SDK client with `max_retries=0`, and `classify_failure` tells the loop
whether an error is worth another attempt, and if not, what to tell the user. When the server
says how long to wait (`retry-after-ms`, `retry-after`: seconds or an HTTP date), the loop
waits that long (capped); otherwise it backs off exponentially with jitter, so that clients
that failed together do not all come back together.

Credentials and the endpoint come from the environment the way the SDK reads them:
`ANTHROPIC_API_KEY`, else `ANTHROPIC_AUTH_TOKEN` (sent as a Bearer token, for gateways and
proxies), and `ANTHROPIC_BASE_URL`.

`anthropic` takes over a second to import, and importing any core module must stay cheap
(tests/core/test_import_hygiene.py), so the SDK is imported inside functions only.
"""

from __future__ import annotations

import datetime
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from anthropic.lib.streaming import AsyncMessageStream

API_KEY_ENV = "ANTHROPIC_API_KEY"
AUTH_TOKEN_ENV = "ANTHROPIC_AUTH_TOKEN"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
MODEL_ENV = "ANTHROPIC_MODEL"
DEFAULT_MODEL = "claude-opus-5-5"
DEFAULT_MAX_TOKENS = 32_000
"""The output budget of a model this build knows nothing about: one every current model
accepts, so an unknown id is never refused for asking too much."""

THINKING_ENV = "MAX_THINKING_TOKENS"
"""The seeds' system's variable: `0` turns thinking off; a number caps a budget model's
thinking (`budget_tokens`); adaptive models decide for themselves and ignore a number."""
DEFAULT_THINKING_BUDGET = 31_999
"""The budget the seeds' system gives a model that takes one, when nothing says otherwise."""
MIN_THINKING_BUDGET = 1_024
"""The API refuses a smaller `budget_tokens`: below it a model is not asked to think."""

Thinking = Literal["adaptive", "budget", "off"]
"""What the request asks of the model's thinking: `adaptive` sends `{"type": "adaptive"}`
(the model decides when and how much to think), `budget` sends `{"type": "enabled",
"budget_tokens": N}` (the older models' only way to think: `thinking_budget`), `off` sends
no `thinking` at all. In `ModelLimits` it is what the model takes."""


@dataclass(frozen=True, slots=True)
class ModelLimits:
    """What a request to a model may ask for."""

    max_tokens: int
    thinking: Thinking


# The SDK (anthropic 2.14) knows no model's output limit: its only table,
# MODEL_NONSTREAMING_TOKENS, caps non-streaming calls of Claude Opus 4.0/4.1, and proctor
# always streams. The limits below are the published ones; claude-opus-5-5's 128000 is what
# the seeds' system was seen to ask for. Matched by prefix, so dated ids
# (claude-sonnet-4-5-20250929) find theirs; the longest prefix wins. A request with these
# budgets must stream: the SDK refuses a non-streaming one it expects to outlast 10 minutes
# (anything near 128000 tokens).
_LIMITS: dict[str, ModelLimits] = {
    "claude-opus-5-5": ModelLimits(128_000, "adaptive"),
    "claude-opus-4-6": ModelLimits(128_000, "adaptive"),
    "claude-sonnet-4-6": ModelLimits(64_000, "adaptive"),
    # Later models than the SDK documents limits for: adaptive thinking, and the budget the
    # 4.6 models share, until one is known.
    "claude-opus-5": ModelLimits(64_000, "adaptive"),
    "claude-sonnet-5": ModelLimits(64_000, "adaptive"),
    "claude-haiku-5": ModelLimits(64_000, "adaptive"),
    "claude-opus-4-7": ModelLimits(64_000, "adaptive"),
    "claude-opus-4-8": ModelLimits(64_000, "adaptive"),
    # Older models take no adaptive thinking: they think within a budget (extended
    # thinking, `{"type": "enabled", "budget_tokens": N}`), from Claude 3.7 Sonnet on.
    "claude-opus-4-5": ModelLimits(64_000, "budget"),
    "claude-sonnet-4-5": ModelLimits(64_000, "budget"),
    "claude-haiku-4-5": ModelLimits(64_000, "budget"),
    "claude-opus-4-1": ModelLimits(32_000, "budget"),
    "claude-opus-4-0": ModelLimits(32_000, "budget"),
    "claude-opus-4-2": ModelLimits(32_000, "budget"),  # claude-opus-4-20250514
    "claude-sonnet-4-0": ModelLimits(64_000, "budget"),
    "claude-sonnet-4-2": ModelLimits(64_000, "budget"),  # claude-sonnet-4-20250514
    "claude-3-7-sonnet": ModelLimits(64_000, "budget"),
    # Before 3.7 no model thinks: a `thinking` field would be refused.
    "claude-3-5-haiku": ModelLimits(8_192, "off"),
    "claude-3-haiku": ModelLimits(4_096, "off"),
}
_UNKNOWN = ModelLimits(DEFAULT_MAX_TOKENS, "off")


def limits_for(model: str) -> ModelLimits:
    """The output budget and thinking a request to `model` asks for. An id this build does
    not know gets a budget every model accepts and no thinking: a request the API may
    answer less well, never one it refuses."""
    known = [prefix for prefix in _LIMITS if model.startswith(prefix)]
    return _LIMITS[max(known, key=len)] if known else _UNKNOWN


def thinking_budget(max_tokens: int, wanted: int | None = None) -> int | None:
    """The `budget_tokens` of a request with this output budget: `wanted` (MAX_THINKING_TOKENS)
    or the default, raised to the API's minimum, but never more than three quarters of
    `max_tokens`, so the answer and its tool calls keep a quarter (the API wants the budget
    below max_tokens, and thinking counts against it). None when even the minimum does not
    fit: no thinking."""
    ceiling = max_tokens * 3 // 4
    if ceiling < MIN_THINKING_BUDGET:
        return None
    return min(max(wanted or DEFAULT_THINKING_BUDGET, MIN_THINKING_BUDGET), ceiling)


@dataclass(frozen=True, slots=True)
class ThinkingEnv:
    """What MAX_THINKING_TOKENS says: thinking off, a budget, or nothing; and, for a value
    that is not a number of tokens, what is wrong with it (the value is then not used)."""

    off: bool = False
    budget: int | None = None
    problem: str | None = None


def thinking_env(env: Mapping[str, str] | None = None) -> ThinkingEnv:
    """MAX_THINKING_TOKENS read the seeds' system's way: `0` off, a positive number a budget."""
    text = (os.environ if env is None else env).get(THINKING_ENV, "").strip()
    if not text:
        return ThinkingEnv()
    # ASCII digits only: no sign, no fraction, no "32k", no "²" (a digit to isdigit that
    # int() refuses); and few enough of them for int() to read.
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        return ThinkingEnv(
            problem=f"{THINKING_ENV} must be a whole number of tokens (0 turns thinking "
            f"off), not {text!r}; it is not used"
        )
    tokens = int(text)
    return ThinkingEnv(off=tokens == 0, budget=tokens or None)


# Errors carried in the body of a 200 stream (an SSE `error` event) that a retry may cure.
_RETRYABLE_ERROR_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error"})


class MissingApiKey(RuntimeError):
    """No API key in the environment; the message says how to provide one."""


def missing_key_message() -> str:
    return (
        f"Neither {API_KEY_ENV} nor {AUTH_TOKEN_ENV} is set. Export your Anthropic API key "
        f"(export {API_KEY_ENV}=sk-ant-...) or a bearer token for your gateway "
        f"({AUTH_TOKEN_ENV}, with {BASE_URL_ENV} if it is not the Anthropic API), or run "
        "`proctor --demo` to try the offline demo without one."
    )


def has_credentials(env: Mapping[str, str] | None = None) -> bool:
    """Whether the environment holds a key or a token (checked before the app starts)."""
    environ = os.environ if env is None else env
    return any(environ.get(name, "").strip() for name in (API_KEY_ENV, AUTH_TOKEN_ENV))


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently a failed request is tried again.

    After attempt n (counting from 1) fails, the wait before attempt n+1 is what the server
    asked for (`Failure.retry_after_s`, at most `max_server_delay_s`), or else
    base * 2**(n-1), capped at `max_delay_s`, plus up to `jitter` of that at random."""

    max_attempts: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 32.0
    jitter: float = 0.25
    max_server_delay_s: float = 60.0
    """A server asking for longer is waited for this long (the user sees the retry, and
    can interrupt it), rather than ignored."""
    draw: Callable[[], float] = field(default=random.random, repr=False, compare=False)
    """Where the jitter comes from, a number in [0, 1): tests give a fixed one."""

    def delay(self, attempt: int, server_delay_s: float | None = None) -> float:
        if server_delay_s is not None:
            return min(max(server_delay_s, 0.0), self.max_server_delay_s)
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** max(attempt - 1, 0))
        return float(backoff * (1 + self.jitter * self.draw()))


@dataclass(frozen=True, slots=True)
class Failure:
    """What a failed request means: retry it (`reason` says why it failed), or stop the
    turn (`reason` says what happened and what the user can do)."""

    action: Literal["retry", "stop"]
    reason: str
    retry_after_s: float | None = None
    """How long the server asked the client to wait before trying again, if it said."""


class ModelClient:
    """Streams Messages requests for one model through an SDK client."""

    def __init__(
        self,
        client: AsyncAnthropic,
        *,
        model: str,
        max_tokens: int | None = None,
        thinking: Thinking | None = None,
        thinking_budget: int | None = None,
    ) -> None:
        """`max_tokens` and `thinking` default to what `limits_for(model)` says;
        `thinking_budget` (MAX_THINKING_TOKENS) caps a budget model's thinking."""
        limits = limits_for(model)
        self.client = client
        self.model = model
        self.max_tokens = max_tokens if max_tokens is not None else limits.max_tokens
        self.thinking: Thinking = thinking if thinking is not None else limits.thinking
        self.thinking_budget = thinking_budget
        self._max_tokens_given = max_tokens

    def use_model(self, model: str) -> None:
        """Ask for `model` from the next request on (`/model`, a command's `model:`), with
        its own output budget and thinking: another model's would be refused. A budget given
        at start is kept where the new model allows it, and thinking the person turned off
        stays off."""
        turned_off = self.thinking == "off" and limits_for(self.model).thinking != "off"
        limits = limits_for(model)
        given = self._max_tokens_given
        self.model = model
        self.max_tokens = min(given, limits.max_tokens) if given else limits.max_tokens
        self.thinking = "off" if turned_off else limits.thinking

    def thinking_field(self) -> dict[str, Any] | None:
        """The request's `thinking`, or None for a request that asks for none."""
        if self.thinking == "adaptive":
            return {"type": "adaptive"}
        if self.thinking == "budget":
            budget = thinking_budget(self.max_tokens, self.thinking_budget)
            if budget is not None:
                return {"type": "enabled", "budget_tokens": budget}
        return None

    @classmethod
    def from_env(
        cls,
        model: str | None = None,
        *,
        settings_model: str | None = None,
        env: Mapping[str, str] | None = None,
        max_tokens: int | None = None,
        thinking: Thinking | None = None,
        http_client: Any = None,
    ) -> ModelClient:
        """A client for the real API, with the key from ANTHROPIC_API_KEY.

        The model is `--model` (`model`), else ANTHROPIC_MODEL, else the settings' `model`
        (`settings_model`), else the default: the order the seeds' system uses. The key
        wins over a token when both are set, as in the SDK (which takes only one of them).
        `max_tokens` and `thinking` default to the model's (`limits_for`); `thinking="off"`
        is the settings' `alwaysThinkingEnabled: false`, and MAX_THINKING_TOKENS (`0`: off,
        else a budget model's budget) is read from `env` (`thinking_env`).
        `http_client` is for tests: the API answered in process."""
        environ = os.environ if env is None else env
        key = environ.get(API_KEY_ENV, "").strip()
        token = environ.get(AUTH_TOKEN_ENV, "").strip()
        if not key and not token:
            raise MissingApiKey(missing_key_message())
        base_url = environ.get(BASE_URL_ENV, "").strip() or None
        import anthropic

        # The loop retries (and shows each retry); the SDK must not retry behind its back.
        client = anthropic.AsyncAnthropic(
            api_key=key or None,
            auth_token=None if key else token,
            base_url=base_url,
            http_client=http_client,
            max_retries=0,
        )
        chosen = model or environ.get(MODEL_ENV, "").strip() or settings_model or DEFAULT_MODEL
        said = thinking_env(environ)
        return cls(
            client,
            model=chosen,
            max_tokens=max_tokens,
            thinking="off" if said.off else thinking,
            thinking_budget=said.budget,
        )

    def stream(
        self,
        *,
        system: Sequence[Mapping[str, Any]],
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
    ) -> AbstractAsyncContextManager[AsyncMessageStream]:
        """One streamed request; use as `async with client.stream(...) as stream:`."""
        extra: dict[str, Any] = {"tools": list(tools)} if tools else {}
        thinking = self.thinking_field()
        if thinking is not None:
            extra["thinking"] = thinking
        return self.client.messages.stream(
            model=self.model,
            max_tokens=self.max_tokens,
            system=list(system),  # type: ignore[arg-type]
            messages=list(messages),  # type: ignore[arg-type]
            **extra,
        )

    async def count_tokens(
        self,
        *,
        system: Sequence[Mapping[str, Any]],
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
    ) -> int:
        """The API's count of a request's input tokens (the SDK's token counting)."""
        extra: dict[str, Any] = {"tools": list(tools)} if tools else {}
        counted = await self.client.messages.count_tokens(
            model=self.model,
            system=list(system),  # type: ignore[arg-type]
            messages=list(messages),  # type: ignore[arg-type]
            **extra,
        )
        return int(counted.input_tokens)


def classify_failure(error: BaseException, *, now: Callable[[], float] = time.time) -> Failure:
    """Whether a request that raised `error` is worth another attempt.

    Retried: 429, 529 and 5xx, connection failures (before or during the stream) and an
    overloaded or internal error event in the middle of a stream. Everything else stops the
    turn, with a message saying what the user can do about it. The server has the last word
    where it gives one, as the SDK lets it: `x-should-retry: true` or `false`. `now` (epoch
    seconds) reads a `retry-after` given as an HTTP date."""
    import anthropic
    import httpx2

    if isinstance(error, anthropic.APIStatusError):
        status = error.status_code
        error_type = _body_error_type(error.body)
        headers = error.response.headers
        failure = _status_failure(error, status, error_type, retry_after(headers, now()))
        should_retry = headers.get("x-should-retry", "").strip().lower()
        if failure.action == "retry" and should_retry == "false":
            return Failure("stop", _stop_message(error, status, error_type))
        if failure.action == "stop" and should_retry == "true" and status != 200:
            return Failure("retry", f"the API asked for a retry ({status})", failure.retry_after_s)
        return failure
    if isinstance(error, anthropic.APIConnectionError):
        return Failure("retry", "the connection failed")
    if isinstance(error, httpx2.TransportError):
        return Failure("retry", "the connection dropped")
    if isinstance(error, anthropic.APIResponseValidationError):
        return Failure("stop", f"The API's response could not be read: {error}")
    return Failure("stop", f"The request failed: {type(error).__name__}: {error}")


def _status_failure(error: Any, status: int, error_type: str | None, wait: float | None) -> Failure:
    """What an HTTP status (or a 200 stream's error event) means by itself."""
    if status == 429:
        return Failure("retry", "rate limited (429)", wait)
    if status == 529 or error_type == "overloaded_error":
        return Failure("retry", "the API is overloaded", wait)
    if status == 200 and error_type in _RETRYABLE_ERROR_TYPES:
        return Failure("retry", f"the stream failed ({error_type})")
    if status >= 500 or status == 408:
        return Failure("retry", f"server error ({status})", wait)
    return Failure("stop", _stop_message(error, status, error_type), wait)


def retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds the server asked to wait: `retry-after-ms`, else `retry-after` as seconds or
    as an HTTP date (against `now`, epoch seconds). None when absent or unreadable; a date
    in the past is 0."""
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    text = headers.get("retry-after")
    if text is None:
        return None
    seconds = _number(text)
    if seconds is not None:
        return seconds
    import email.utils  # only when a server sends a date

    try:
        when = email.utils.parsedate_to_datetime(text.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": an HTTP date is GMT whatever it says
        when = when.replace(tzinfo=datetime.UTC)
    return max(when.timestamp() - now, 0.0)


def _number(text: str | None) -> float | None:
    """A finite, non-negative number of the header's text, or None."""
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if 0 <= value < float("inf") else None


def _body_error_type(body: object) -> str | None:
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping) and isinstance(inner.get("type"), str):
            return str(inner["type"])
    return None


def _stop_message(error: Any, status: int, error_type: str | None) -> str:
    detail = getattr(error, "message", "") or str(error)
    if status == 401:
        return (
            f"The API key was refused (401). Check {API_KEY_ENV} (or {AUTH_TOKEN_ENV}, "
            f"and {BASE_URL_ENV} if you use a gateway). ({detail})"
        )
    if status == 403:
        return f"The API key may not use this (403): {detail}"
    if status == 404:
        return f"Not found (404); check the model name given by --model or settings: {detail}"
    if status == 413:
        return f"The request is too large (413); start a new session or shorten it: {detail}"
    kind = f" {error_type}" if error_type else ""
    return f"The API refused the request ({status}{kind}): {detail}"
