"""Oversized results: thresholds, previews, the per-message budget, stable replacement."""

from __future__ import annotations

import math
from pathlib import Path

from engine_helpers import make_context, make_services, text_of
from hypothesis import given
from hypothesis import strategies as st
from tools_for_tests import Sleep, Unbounded

from core.executor import ToolCall, run_tool_use
from core.results import (
    ContentReplacementState,
    ResultStore,
    enforce_tool_result_budget,
    persist_result,
    persistence_threshold,
    preview,
)


def test_threshold_is_the_smaller_of_the_tool_limit_and_fifty_thousand():
    assert persistence_threshold(100_000) == 50_000
    assert persistence_threshold(20_000) == 20_000
    assert persistence_threshold(math.inf) == math.inf


async def test_results_at_the_threshold_stay_inline_and_one_more_char_persists(tmp_path):
    services = make_services(session_dir=tmp_path)
    context = make_context([Sleep()])
    at_limit = await run_tool_use(
        ToolCall("a", "Sleep", {"output": "x" * 50_000}), services, context
    )
    over = await run_tool_use(ToolCall("b", "Sleep", {"output": "x" * 50_001}), services, context)
    assert text_of(at_limit) == "x" * 50_000
    assert "<persisted-output>" in text_of(over)
    assert (tmp_path / "tool-results" / "b.txt").stat().st_size == 50_001


async def test_a_tool_declaring_infinity_is_never_persisted(tmp_path):
    services = make_services(session_dir=tmp_path)
    huge = "y" * 300_000
    outcome = await run_tool_use(
        ToolCall("r", "Reader", {"output": huge}), services, make_context([Unbounded()])
    )
    assert text_of(outcome) == huge
    assert not (tmp_path / "tool-results").exists()


def test_persisted_message_has_size_path_and_a_preview_ending_on_a_whole_line(tmp_path):
    text = "".join(f"row {i:05d} " + "." * 40 + "\n" for i in range(5000))
    result = persist_result(ResultStore(tmp_path), "toolu_1", text)
    assert result.path == tmp_path / "tool-results" / "toolu_1.txt"
    assert result.path.read_text() == text
    body = result.content
    assert body.startswith("<persisted-output>\nOutput too large (")
    assert "KB)" in body and f"Full output saved to: {result.path}" in body
    shown = body.split("):\n", 1)[1].rsplit("\n...\n", 1)[0]
    assert text.startswith(shown) and text[len(shown)] == "\n"
    assert 1000 <= len(shown.encode()) <= 2000


@given(st.text(min_size=0, max_size=3000))
def test_preview_never_exceeds_the_budget_nor_splits_a_character(text):
    shown, cut = preview(text, 2000)
    assert len(shown.encode("utf-8", "surrogatepass")) <= 2000
    assert text.startswith(shown)
    assert cut == (shown != text)


def test_preview_of_multibyte_text_without_newlines_cuts_on_a_character_boundary():
    text = "€" * 1500  # three bytes each
    shown, cut = preview(text, 2000)
    assert cut and shown == "€" * 666


def test_preview_prefers_a_newline_in_the_second_half_only():
    early_break = "a" * 100 + "\n" + "b" * 5000
    shown, _ = preview(early_break, 2000)
    assert len(shown) == 2000  # the break at 5% is too early to use
    late_break = "a" * 1500 + "\n" + "b" * 5000
    assert preview(late_break, 2000)[0] == "a" * 1500


def test_persistence_ids_cannot_escape_the_results_directory(tmp_path):
    result = persist_result(ResultStore(tmp_path), "../../etc/passwd", "z" * 10)
    assert result.path is not None
    assert result.path.parent == tmp_path / "tool-results"


def test_an_unwritable_directory_still_returns_a_truncated_result_that_says_why(tmp_path):
    # Not even root may create directories under /proc, so this holds on CI as well.
    result = persist_result(ResultStore(Path("/proc/proctor-session")), "t", "q" * 100_000)
    assert result.path is None and result.error
    assert "could not be saved to /proc/proctor-session" in result.content
    assert result.error in result.content
    assert "q" * 100 in result.content and len(result.content) < 3000


def test_a_session_dir_that_is_a_file_still_returns_a_truncated_result(tmp_path):
    blocker = tmp_path / "session"
    blocker.write_text("not a directory")
    result = persist_result(ResultStore(blocker), "t", "line\n" * 20_000)
    assert result.path is None and result.error
    assert "could not be saved" in result.content
    assert len(result.content) < 3000 and "line" in result.content


async def test_the_call_survives_a_failed_save(tmp_path):
    blocker = tmp_path / "session"
    blocker.write_text("")
    services = make_services(session_dir=blocker)
    outcome = await run_tool_use(
        ToolCall("t", "Sleep", {"output": "w" * 60_000}), services, make_context([Sleep()])
    )
    assert not outcome.is_error
    assert "could not be saved" in text_of(outcome)


def message(*sizes: int, ids: str = "abcdefghij") -> dict:
    return {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": ids[i], "content": "k" * size}
            for i, size in enumerate(sizes)
        ],
    }


def test_aggregate_budget_persists_the_largest_results_first(tmp_path):
    state = ContentReplacementState()
    store = ResultStore(tmp_path)
    original = message(40_000, 90_000, 45_000, 80_000)
    out, newly = enforce_tool_result_budget([original], state, store, budget=200_000)
    assert [tool_use_id for tool_use_id, _ in newly] == ["b"]
    sizes = [len(block["content"]) for block in out[0]["content"]]
    assert sum(sizes) <= 200_000
    assert out[0]["content"][1]["content"].startswith("<persisted-output>")
    assert original["content"][1]["content"] == "k" * 90_000  # the input is not modified


def test_aggregate_budget_leaves_a_message_within_budget_alone(tmp_path):
    state = ContentReplacementState()
    original = message(40_000, 40_000)
    out, newly = enforce_tool_result_budget([original], state, ResultStore(tmp_path))
    assert out[0] is original and newly == []


def test_a_replaced_result_stays_replaced_identically_in_every_later_request(tmp_path):
    state = ContentReplacementState()
    store = ResultStore(tmp_path)
    first = message(150_000, 100_000)
    out1, _ = enforce_tool_result_budget([first], state, store)
    # The next request repeats the earlier message and adds a new, small one.
    later = message(10, ids="z")
    out2, newly = enforce_tool_result_budget([first, later], state, store)
    assert newly == []
    assert out2[0] == out1[0]
    assert out2[1] is later


def test_a_result_once_kept_inline_is_never_replaced_later(tmp_path):
    state = ContentReplacementState()
    store = ResultStore(tmp_path)
    first = message(120_000)
    out1, _ = enforce_tool_result_budget([first], state, store)
    assert out1[0] is first
    # A lower budget later must not change what was already sent.
    out2, newly = enforce_tool_result_budget([first], state, store, budget=10_000)
    assert out2[0] is first and newly == []


def test_results_directory_lives_in_the_session_directory(tmp_path: Path):
    store = ResultStore(tmp_path)
    assert store.path_for("toolu_x") == tmp_path / "tool-results" / "toolu_x.txt"
