"""Costs at published prices (genai-prices): per request, with tiers; unknown models cost
nothing made up."""

from __future__ import annotations

from decimal import Decimal

import pytest

from core.agent.demo import DEMO_MODEL
from core.agent.pricing import UsageTally, request_cost


@pytest.mark.parametrize(
    ("model", "dollars"),
    [
        # a million tokens in and a million out, at each family's published price
        ("claude-sonnet-4-5", 3 + 15),
        ("claude-sonnet-4-5-20250929", 3 + 15),
        ("claude-opus-4-1", 15 + 75),
        ("claude-opus-4-5", 5 + 25),
        ("claude-haiku-4-5", 1 + 5),
    ],
)
def test_known_models_cost_their_published_price(model: str, dollars: int) -> None:
    # Under Sonnet's long-context threshold: 100k in, 100k out, scaled to a million each.
    cost = request_cost(model, {"input_tokens": 100_000, "output_tokens": 100_000})
    assert cost == pytest.approx(Decimal(dollars) / 10)


def test_a_request_over_200k_input_tokens_pays_the_long_context_rate() -> None:
    under = request_cost("claude-sonnet-4-5", {"input_tokens": 200_000, "output_tokens": 1000})
    over = request_cost("claude-sonnet-4-5", {"input_tokens": 200_001, "output_tokens": 1000})
    assert under == pytest.approx(Decimal("0.6") + Decimal("0.015"))
    # $6 a million in, $22.50 out: for every token of the request, not only those past 200k
    assert over == pytest.approx(Decimal("1.200006") + Decimal("0.0225"))


def test_cache_reads_and_writes_count_toward_the_tier_and_cost_their_own_rates() -> None:
    usage = {
        "input_tokens": 1_000,
        "cache_creation_input_tokens": 10_000,
        "cache_read_input_tokens": 100_000,
        "output_tokens": 0,
    }
    # 1k × $3 + 10k × $3.75 + 100k × $0.30, per million
    assert request_cost("claude-sonnet-4-5", usage) == pytest.approx(Decimal("0.0705"))
    # With the cache reads the request's input passes 200k: every rate doubles.
    usage["cache_read_input_tokens"] = 200_000
    assert request_cost("claude-sonnet-4-5", usage) == pytest.approx(
        2 * (Decimal("0.003") + Decimal("0.0375") + Decimal("0.06"))
    )


@pytest.mark.parametrize("model", ["", "gpt-4o-but-not", "claude-opus-40"])
def test_unknown_models_have_no_cost(model: str) -> None:
    assert request_cost(model, {"input_tokens": 1000, "output_tokens": 1000}) is None


def test_the_tally_prices_each_request_on_its_own_and_updates_replace() -> None:
    tally = UsageTally()
    tally.update("a", "claude-sonnet-4-5", {"input_tokens": 150_000, "output_tokens": 1})
    tally.update("a", "claude-sonnet-4-5", {"input_tokens": 150_000, "output_tokens": 0})
    tally.update("b", "claude-sonnet-4-5", {"input_tokens": 150_000})
    # 300k tokens in all, but no single request passed 200k: the base rate
    assert tally.input_tokens == 300_000 and tally.output_tokens == 0
    assert tally.requests == 2
    assert tally.cost_usd == pytest.approx(0.9)


def test_one_unpriced_request_makes_the_whole_cost_unknown_not_a_partial_sum() -> None:
    tally = UsageTally()
    tally.update("a", "claude-sonnet-4-5", {"input_tokens": 1000})
    tally.update("b", "claude-opus-40", {"input_tokens": 1000, "output_tokens": 5})
    assert tally.cost_usd is None
    assert (tally.input_tokens, tally.output_tokens) == (2000, 5)


def test_garbled_counts_are_read_as_zero_not_an_error() -> None:
    tally = UsageTally()
    tally.update("a", "claude-sonnet-4-5", {"input_tokens": -5, "output_tokens": "12", "x": 1})
    assert (tally.input_tokens, tally.output_tokens) == (0, 0)
    assert tally.cost_usd == 0.0


def test_the_offline_demo_costs_nothing_rather_than_an_unknown_amount() -> None:
    from core.agent.pricing import OFFLINE_MODELS, is_priced

    assert DEMO_MODEL in OFFLINE_MODELS
    assert is_priced(DEMO_MODEL)
    assert request_cost(DEMO_MODEL, {"input_tokens": 300_000, "output_tokens": 9}) == 0
