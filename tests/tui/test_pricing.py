"""Prices by model name, and the cost of a turn's usage (no textual needed)."""

from __future__ import annotations

import pytest

from core.agent.demo import DEMO_MODEL
from tui.pricing import Price, cost_usd, price_for


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("claude-opus-4-20250514", Price(15.0, 75.0)),
        ("claude-opus-4-1", Price(15.0, 75.0)),
        ("claude-opus-4-5-20251101", Price(5.0, 25.0)),
        ("claude-sonnet-4-5", Price(3.0, 15.0)),
        ("claude-sonnet-4-20250514", Price(3.0, 15.0)),
        ("claude-haiku-4-5", Price(1.0, 5.0)),
        ("claude-3-5-haiku-20241022", Price(0.8, 4.0)),
        ("claude-3-haiku-20240307", Price(0.25, 1.25)),
        ("anthropic.claude-sonnet-4-5-v1:0", Price(3.0, 15.0)),
        ("Claude-Sonnet-4", Price(3.0, 15.0)),
    ],
)
def test_known_models_price_by_family(model: str, price: Price) -> None:
    assert price_for(model) == price


@pytest.mark.parametrize("model", [DEMO_MODEL, "proctor-demo", "", "gpt-4o", "claude-opus-40"])
def test_unknown_models_have_no_price(model: str) -> None:
    assert price_for(model) is None
    assert cost_usd(model, {"input_tokens": 1000, "output_tokens": 1000}) is None


def test_cost_counts_input_output_and_cache_at_their_rates() -> None:
    usage = {
        "input_tokens": 1_000_000,
        "output_tokens": 1_000_000,
        "cache_creation_input_tokens": 1_000_000,
        "cache_read_input_tokens": 1_000_000,
    }
    # sonnet: 3 in + 15 out + 3 × 1.25 cache write + 3 × 0.1 cache read
    assert cost_usd("claude-sonnet-4-5", usage) == pytest.approx(3 + 15 + 3.75 + 0.3)


def test_missing_usage_keys_count_as_zero() -> None:
    assert cost_usd("claude-opus-4", {"output_tokens": 2000}) == pytest.approx(0.15)
    assert cost_usd("claude-opus-4", {}) == 0.0
