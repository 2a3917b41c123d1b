"""What a session's tokens cost, from a small table of list prices.

The status bar shows a running cost so a person supervising a long run notices when it gets
expensive. Prices are data (per million tokens, by model-name prefix), not an API call: the
number is an estimate at list price, and an estimate that needs no network is worth more on
a status line than an exact one that may stall. A model the table does not know (the offline
demo model, a new release) gets `None`, which the UI shows as "n/a" rather than a guess.

Names are matched by their longest known prefix after the "claude-" part, so dated releases
("claude-sonnet-4-5-20250929") and provider-prefixed ids ("anthropic.claude-…") price like
their family. Longer prefixes win so "opus-4-5" is not priced as "opus-4".

Prompt caching: writing to the cache costs 1.25× the input price (five-minute cache), reading
from it 0.1×. The long-context premium some models charge beyond 200k tokens is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.1
PER_MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float


PRICES: dict[str, Price] = {
    # Opus 4.5 and later dropped to a third of the Opus 4 / 4.1 price.
    "opus-4-6": Price(5.0, 25.0),
    "opus-4-5": Price(5.0, 25.0),
    "opus-4": Price(15.0, 75.0),
    "sonnet-4": Price(3.0, 15.0),
    "haiku-4": Price(1.0, 5.0),
    "3-opus": Price(15.0, 75.0),
    "3-7-sonnet": Price(3.0, 15.0),
    "3-5-sonnet": Price(3.0, 15.0),
    "3-5-haiku": Price(0.8, 4.0),
    "3-haiku": Price(0.25, 1.25),
}

_BY_LENGTH = sorted(PRICES, key=len, reverse=True)


def price_for(model: str) -> Price | None:
    """The list price of `model`, or None when the table does not know it."""
    name = model.strip().lower()
    marker = name.rfind("claude-")
    if marker >= 0:
        name = name[marker + len("claude-") :]
    for prefix in _BY_LENGTH:
        # The character after the prefix must end the family name ("opus-4" is not "opus-40").
        if name.startswith(prefix) and not name[len(prefix) : len(prefix) + 1].isalnum():
            return PRICES[prefix]
    return None


def cost_usd(model: str, usage: Mapping[str, int]) -> float | None:
    """The cost of `usage` (the API's token counts) at `model`'s list price, or None."""
    price = price_for(model)
    if price is None:
        return None
    input_dollars = price.input * (
        usage.get("input_tokens", 0)
        + CACHE_WRITE_FACTOR * usage.get("cache_creation_input_tokens", 0)
        + CACHE_READ_FACTOR * usage.get("cache_read_input_tokens", 0)
    )
    return (input_dollars + price.output * usage.get("output_tokens", 0)) / PER_MILLION
