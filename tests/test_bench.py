"""The benchmark runner answers for every figure, and every figure's benchmark still works.

`bench/run.py --quick` runs each benchmark with few iterations and small inputs; it runs once
here (a minute of wall time on two busy cores, most of it the scenarios' own sleeps), and
each figure that `run.py --list` names gets its own test of what that run printed. The cases
come from the runner's registry, so a figure added to a bench module is checked without
anyone listing it here, and one whose benchmark has no quick mode, or breaks, fails by name.

Nothing here asserts a timing. What is asserted is that each figure is well-formed, and that
its number is what its text says it is: recomputed from the rounds its details give (the best
of them where the text says "best of", the slowest where it says "slowest", and so on).
"""

from __future__ import annotations

import json
import math
import re
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

RUN = Path(__file__).resolve().parents[1] / "bench" / "run.py"

Details = dict[str, Any]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUN), *args], capture_output=True, text=True, check=False
    )


REGISTERED = run("--list").stdout.split()


def _unmet_needs() -> dict[str, str]:
    """Figures this machine cannot make, and why: the suite holds on any Linux."""
    from core.sandbox.support import probe
    from core.tools.grep import rg_path

    unmet = {}
    if not (support := probe()).available:
        unmet["sandbox_overhead_ms"] = f"no kernel sandbox here: {support.problem}"
    if rg_path() is None:
        unmet["grep_vs_rg_ratio"] = "no ripgrep here"
    return unmet


UNMET = _unmet_needs()

MAY_BE_ZERO = {"false_refusal_rate", "bash_1gb_rss_mb", "viewer_open_1gb_rss_mb"}
"""A share of nothing refused, a peak memory that did not grow."""
DIFFERENCES = {"sandbox_overhead_ms", "mcp_call_overhead_ms"}
"""One median minus another: on a busy machine it may come out below zero."""


@pytest.fixture(scope="module")
def smoke() -> tuple[dict[str, dict[str, Any]], subprocess.CompletedProcess[str]]:
    done = run("--quick", "--json")
    figures = {}
    for line in done.stdout.splitlines():
        record = json.loads(line)
        figures[record["name"]] = record
    return figures, done


def test_the_runner_lists_every_figure_the_issues_name():
    for figure in (
        "executor_overhead_us",
        "parallel_efficiency_10",
        "parallel_efficiency_30_cap10",
        "streaming_head_start_ratio",
        "first_start_latency_ms",
        "bash_classify_per_s",
        "check_batch_per_s",
        "check_batch_cached_per_s",
        "grep_vs_rg_ratio",
        "bash_1gb_rss_mb",
        "bash_1gb_wall_ratio",
        "demo_turn_overhead_ratio",
        "viewer_open_1gb_s",
        "viewer_open_1gb_rss_mb",
        "startup_version_s",
        "tui_first_frame_ratio",
        "tui_event_flood_s",
        "tui_key_latency_ms",
        "sandbox_overhead_ms",
        "sandbox_probe_ms",
        "false_refusal_rate",
        "mcp_call_overhead_ms",
        "mcp_startup_parallel_ratio",
        "headless_first_request_ratio",
        "headless_exit_ms",
        "prompt_build_ms",
        "compaction_keeps_cache",
    ):
        assert figure in REGISTERED


def test_an_unknown_figure_is_refused_with_the_known_ones():
    result = run("--json", "warp_speed")
    assert result.returncode == 2
    assert "unknown figure(s): warp_speed" in result.stderr
    assert "executor_overhead_us" in result.stderr


def test_the_smoke_run_of_every_benchmark_ends_without_a_failure(smoke):
    _, done = smoke
    failed = re.search(r"^failed, no figures: (.*)$", done.stderr, re.MULTILINE)
    unexpected = set(failed.group(1).split("; ") if failed else ()) - set(UNMET)
    assert not unexpected, done.stderr[-5000:]
    assert done.returncode == (1 if failed else 0)


@pytest.mark.parametrize("name", REGISTERED)
def test_every_registered_figure_comes_out_of_its_smoke_run_well_formed(name, smoke):
    if name in UNMET:
        pytest.skip(UNMET[name])
    figures, done = smoke
    assert name in figures, f"the smoke run printed no {name}:\n{done.stderr[-3000:]}"
    figure = figures[name]
    value = figure["value"]
    assert isinstance(value, int | float) and math.isfinite(value), figure
    if name not in DIFFERENCES:
        assert value >= 0 if name in MAY_BE_ZERO else value > 0, figure
    assert re.fullmatch(r"[a-zA-Z%/]+", figure["unit"]), figure
    assert re.fullmatch(r"(<=|>=) [0-9.]+", figure["target"]), figure
    assert isinstance(figure["passed"], bool)
    assert len(figure["compared_with"]) > 20 and isinstance(figure["details"], dict), figure


def _rounds(key: str, field: str) -> Callable[[Details], list[float]]:
    return lambda d: [r[field] for r in d[key]]


# For a figure: the words its text must use, and the number recomputed from its details.
AGREEMENT: dict[str, tuple[str, Callable[[Details], float]]] = {
    "executor_overhead_us": ("best of 2 medians", lambda d: min(d["round_medians_us"])),
    "first_start_latency_ms": (
        "slowest of a streaming round's 10 calls; the best of 2 rounds",
        lambda d: min(d["round_max_ms"]),
    ),
    "streaming_head_start_ratio": (
        "best of 2 rounds' ratios",
        lambda d: min(r["streaming_s"] / r["after_stream_s"] for r in d["rounds"]),
    ),
    "parallel_efficiency_10": ("best of 2 rounds", lambda d: min(d["walls_s"]) / 0.1),
    "parallel_efficiency_30_cap10": ("best of 2 rounds", lambda d: min(d["walls_s"]) / 0.3),
    "demo_turn_overhead_ratio": (
        "the best of 2 rounds of each, after one warm-up round of each side",
        lambda d: (
            min(_rounds("rounds", "turn_s")(d))
            / min(r["stream_s"] + r["slowest_call_past_stream_s"] for r in d["rounds"])
        ),
    ),
    "check_batch_per_s": (
        "all different (no cache can answer), start-up included; best of 2 runs",
        lambda d: d["requests"] / min(d["walls_s"]),
    ),
    "check_batch_cached_per_s": (
        "cycling through ten commands",
        lambda d: d["requests"] / min(d["walls_s"]),
    ),
    "bash_classify_per_s": (
        "best of 2 rounds",
        lambda d: d["classifications_per_round"] / min(d["round_walls_s"]),
    ),
    "bash_1gb_rss_mb": ("the worst of 2", lambda d: max(d["rss_growth_mb_per_round"])),
    "bash_1gb_wall_ratio": (
        "best Bash-tool wall",
        lambda d: min(d["tool_walls_s"]) / min(d["devnull_walls_s"]),
    ),
    "grep_vs_rg_ratio": ("best of 2 rounds", lambda d: d["tool_best_ms"] / d["rg_best_ms"]),
    "viewer_open_1gb_s": ("best of 2 runs", lambda d: min(_rounds("runs", "open_s")(d))),
    "viewer_open_1gb_rss_mb": (
        "the worst of 2 runs",
        lambda d: max(_rounds("runs", "rss_growth_mb")(d)),
    ),
    "startup_version_s": ("best of 2", lambda d: min(d["runs_s"])),
    "tui_first_frame_ratio": ("best of 1 each", lambda d: d["proctor_s"] / d["bare_s"]),
    "tui_event_flood_s": ("best of 2 rounds", lambda d: min(d["rounds_s"])),
    "tui_key_latency_ms": ("slowest of 2 shift+tab presses", lambda d: max(d["presses_ms"])),
    "headless_first_request_ratio": (
        "median of 2 pairs' ratios",
        lambda d: statistics.median(d["ratio_runs"]),
    ),
    "headless_exit_ms": ("median of 2 runs", lambda d: statistics.median(d["runs_ms"])),
    "sandbox_overhead_ms": (
        "median of 3 sandboxed `true` through the Bash tool minus the median of 3",
        lambda d: d["sandboxed_median_ms"] - d["unsandboxed_median_ms"],
    ),
    "mcp_call_overhead_ms": (
        "median of 10 `echo` calls",
        lambda d: d["full_median_ms"] - d["bare_median_ms"],
    ),
    "mcp_startup_parallel_ratio": (
        "median of 1 rounds each",
        lambda d: d["five_servers_s"] / d["one_server_s"],
    ),
    "grep_abort_ms": ("median of 2 aborts", lambda d: statistics.median(d["returned_ms"])),
    "webfetch_abort_ms": ("median of 2 aborts", lambda d: statistics.median(d["rounds_ms"])),
    "webfetch_timeout_overrun_ms": (
        "median of 2 fetches with a 0.2 s timeout",
        lambda d: statistics.median(d["rounds_ms"]),
    ),
}


@pytest.mark.parametrize("name", sorted(AGREEMENT))
def test_a_figures_text_says_how_its_number_was_taken(name, smoke):
    if name in UNMET:
        pytest.skip(UNMET[name])
    figures, done = smoke
    assert name in figures, f"the smoke run printed no {name}:\n{done.stderr[-3000:]}"
    figure = figures[name]
    words, recompute = AGREEMENT[name]
    assert words in figure["compared_with"]
    # The details are rounded (to 0.1 ms, 1 ms, ...): close, not equal.
    assert figure["value"] == pytest.approx(recompute(figure["details"]), rel=0.005, abs=0.01)


def test_the_batch_figure_asks_about_different_commands_with_the_cached_ones_verdicts(smoke):
    figures, _ = smoke
    distinct, cached = figures["check_batch_per_s"], figures["check_batch_cached_per_s"]
    # The same families of commands, so the same mix of answers: only the cache differs.
    assert distinct["details"]["verdicts"] == cached["details"]["verdicts"]
    assert set(distinct["details"]["verdicts"]) == {"allow", "ask", "deny"}


def test_the_turn_overhead_is_taken_after_a_warm_up_of_both_sides(smoke):
    details = smoke[0]["demo_turn_overhead_ratio"]["details"]
    assert len(details["rounds"]) == 2
    warm_up = details["warm_up_round_not_counted"]
    assert warm_up["turn_s"] > 0 and warm_up["stream_s"] > 0
    # The slowest call's 100 ms overlaps the stream's tail: only what is left of it counts.
    assert all(0 < r["slowest_call_past_stream_s"] < 0.1 for r in details["rounds"])


def test_the_executor_figure_runs_through_a_sessions_transcript_and_audit_log(smoke):
    figures, _ = smoke
    details = figures["executor_overhead_us"]["details"]
    # Queued, started, completed: each call's events reached the transcript.
    assert details["transcript_records_per_call"] >= 3
    assert details["no_transcript_no_audit_us"] > 0 and details["bare_task_us"] > 0


def test_the_headless_figures_come_from_a_real_run_against_a_local_server(smoke):
    figures, _ = smoke
    ratio, exit_ms = figures["headless_first_request_ratio"], figures["headless_exit_ms"]
    assert ratio["unit"] == "ratio" and ratio["target"] == "<= 1.15"
    assert exit_ms["unit"] == "ms" and exit_ms["target"] == "<= 50"
    # proctor reached the server with one Messages request, and both were timed.
    assert ratio["details"]["server_paths"] == ["/v1/messages"]
    assert ratio["details"]["first_request_s"] > 0 and ratio["details"]["bare_import_s"] > 0
    assert ratio["details"]["cpu_ratio"] > 0


def test_a_benchmark_without_a_quick_mode_fails_the_smoke_run_by_name(tmp_path):
    # A copy of the runner beside a module whose benchmark takes no `quick`: the smoke run
    # names it and fails, and still gives the figures of the benchmarks that have one.
    bench = RUN.parent
    for name in ("run.py", "common.py", "bench_prompt.py"):
        (tmp_path / name).write_text((bench / name).read_text())
    (tmp_path / "bench_new.py").write_text(
        "from common import Benchmark, Figure\n\n\n"
        "def new_figure():\n"
        "    return [Figure('new_figure_ms', 1.0, 'ms', '<=', 5, 'one thing, once')]\n\n\n"
        "BENCHMARKS = [Benchmark(('new_figure_ms',), new_figure)]\n"
    )
    done = subprocess.run(
        [sys.executable, str(tmp_path / "run.py"), "--quick", "--json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=RUN.parents[1],
    )
    assert done.returncode == 1
    assert "bench_new.new_figure() takes no `quick` parameter" in done.stderr
    assert "failed, no figures: new_figure_ms" in done.stderr
    assert [json.loads(line)["name"] for line in done.stdout.splitlines()] == ["prompt_build_ms"]
