"""The benchmark runner answers for every figure the issues name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[1] / "bench" / "run.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUN), *args], capture_output=True, text=True, check=False
    )


def test_the_runner_lists_every_figure_the_issues_name():
    listed = run("--list").stdout.split()
    for figure in (
        "executor_overhead_us",
        "parallel_efficiency_10",
        "parallel_efficiency_30_cap10",
        "streaming_head_start_ratio",
        "first_start_latency_ms",
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
        assert figure in listed


def test_an_unknown_figure_is_refused_with_the_known_ones():
    result = run("--json", "warp_speed")
    assert result.returncode == 2
    assert "unknown figure(s): warp_speed" in result.stderr
    assert "executor_overhead_us" in result.stderr


def test_the_headless_figures_come_from_a_real_run_against_a_local_server(monkeypatch):
    monkeypatch.syspath_prepend(str(RUN.parent))
    import bench_headless

    monkeypatch.setattr(bench_headless, "ROUNDS", 1)
    figures = {figure.name: figure.as_json() for figure in bench_headless.headless_figures()}
    assert set(figures) == {"headless_first_request_ratio", "headless_exit_ms"}
    ratio, exit_ms = figures["headless_first_request_ratio"], figures["headless_exit_ms"]
    assert ratio["unit"] == "ratio" and ratio["target"] == "<= 1.15"
    assert exit_ms["unit"] == "ms" and exit_ms["target"] == "<= 50"
    # proctor reached the server with one Messages request, and both were timed.
    assert ratio["details"]["server_paths"] == ["/v1/messages"]
    assert ratio["details"]["first_request_s"] > 0 and ratio["details"]["bare_import_s"] > 0
    assert ratio["details"]["cpu_ratio"] > 0
    assert exit_ms["value"] > 0
