"""What a session's tokens cost, at the published prices the `genai-prices` package keeps.

A person supervising a long run should notice when it gets expensive, so the status bar
(and a headless run's result) shows a running cost. Why it is shaped this way:

- Prices come from genai-prices, not a hand-kept table that goes stale: it ships a snapshot
  of every provider's published prices, tiers included. Nothing here asks the network (its
  auto-update is never started), so a cost never stalls the screen.
- Cost is per request. A price tier (Sonnet's long-context rate beyond 200k input tokens)
  is decided by one request's input, so a session costs the sum of its requests' costs,
  never the price of its summed tokens. `UsageTally` keeps each request's latest counts
  (they arrive in pieces while the response streams: input at message_start, output at
  message_delta, `UsageUpdated`) with that request's cost beside them.
- A model genai-prices does not know (the offline demo's, a release newer than the
  package) has no cost: None, which people read as "cost unknown", never a guess.
- The API counts `input_tokens` without the cache reads and writes; genai-prices counts all
  input in `input_tokens`, with the cached parts named again, so the cache counts are added.
- genai-prices takes a tenth of a second or more to import and as much again to load its
  data, so it is imported on first use; `warm_up()` does both on a thread at start-up.
- Plain Python and decimals only: the TUI's status bar and headless runs share it, and it
  imports nothing of the engine.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
"""The counts a request's usage is made of (anything else in it is not summed)."""

PROVIDER = "anthropic"


OFFLINE_MODELS = frozenset({"claude-demo"})
"""The offline demo's scripted model (`demo.DEMO_MODEL`): no request leaves the machine, so
its requests cost nothing, which people should read as $0.00, not "cost unknown"."""


def request_cost(model: str, usage: Mapping[str, Any]) -> Decimal | None:
    """What one request with these counts costs at `model`'s published price, in US dollars;
    None when the price of `model` is not known."""
    if model in OFFLINE_MODELS:
        return Decimal(0)
    if not model or not is_priced(model):
        return None
    from genai_prices import Usage, calc_price

    counts = counts_of(usage)
    cache_write = counts["cache_creation_input_tokens"]
    cache_read = counts["cache_read_input_tokens"]
    try:
        priced = calc_price(
            Usage(
                input_tokens=counts["input_tokens"] + cache_write + cache_read,
                cache_write_tokens=cache_write,
                cache_read_tokens=cache_read,
                output_tokens=counts["output_tokens"],
            ),
            model,
            provider_id=PROVIDER,
        )
    except (LookupError, ValueError):
        return None
    return priced.total_price


def counts_of(usage: Mapping[str, Any]) -> dict[str, int]:
    """The four counts of a usage mapping; missing, negative or non-integer ones are 0."""
    counts: dict[str, int] = {}
    for key in USAGE_KEYS:
        value = usage.get(key)
        counts[key] = value if isinstance(value, int) and not isinstance(value, bool) else 0
        counts[key] = max(counts[key], 0)
    return counts


@functools.lru_cache(maxsize=64)
def is_priced(model: str) -> bool:
    """Whether genai-prices knows `model`'s price (asked once per model)."""
    if model in OFFLINE_MODELS:
        return True
    from genai_prices import Usage, calc_price

    try:
        calc_price(Usage(input_tokens=1, output_tokens=1), model, provider_id=PROVIDER)
    except (LookupError, ValueError):
        return False
    return True


def warm_up() -> None:
    """Import genai-prices and load its data now (call it on a thread), so the first cost
    shown later does not pause the screen."""
    is_priced("claude-sonnet-5-5")


class UsageTally:
    """A session's token counts and cost so far, from its requests' usage updates.

    Each request is kept by id with its latest counts and cost: an update replaces that
    request's numbers, and the sums move by the difference, so a tally of thousands of
    requests takes each update in constant time."""

    def __init__(self) -> None:
        self.totals: dict[str, int] = dict.fromkeys(USAGE_KEYS, 0)
        self._requests: dict[str, tuple[dict[str, int], Decimal | None]] = {}
        self._known_cost = Decimal(0)
        self._unpriced = 0

    def update(self, request_id: str, model: str, usage: Mapping[str, Any]) -> None:
        counts = counts_of(usage)
        before = self._requests.get(request_id)
        if before is not None:
            old_counts, old_cost = before
            if old_counts == counts:
                return
            for key in USAGE_KEYS:
                self.totals[key] -= old_counts[key]
            self._count_cost(old_cost, -1)
        cost = request_cost(model, counts)
        self._requests[request_id] = (counts, cost)
        for key in USAGE_KEYS:
            self.totals[key] += counts[key]
        self._count_cost(cost, 1)

    def _count_cost(self, cost: Decimal | None, sign: int) -> None:
        if cost is None:
            self._unpriced += sign
        else:
            self._known_cost += sign * cost

    @property
    def requests(self) -> int:
        return len(self._requests)

    @property
    def input_tokens(self) -> int:
        """Every input token read, the cache's writes and reads included."""
        totals = self.totals
        return (
            totals["input_tokens"]
            + totals["cache_creation_input_tokens"]
            + totals["cache_read_input_tokens"]
        )

    @property
    def output_tokens(self) -> int:
        return self.totals["output_tokens"]

    @property
    def cost_usd(self) -> float | None:
        """The cost so far; None when a request's model has no known price (a partial sum
        would look like the whole)."""
        if self._unpriced:
            return None
        return float(self._known_cost)
