"""The real app under load: an event flood drawn to the screen, and a key pressed mid-stream.

`tui_event_flood_s` pushes 2,000 tool calls × 5 engine events into a running `ProctorApp`'s
`EventBridge` (the engine's sink) and times until every call is drawn: the bridge has flushed,
the `CallBook` holds 2,000 done calls, the tool queue has laid out every row, the conversation
has mounted and laid out its 2,000 tool lines, and the screen has refreshed after all that.

`tui_key_latency_ms` runs a demo session whose one Bash call streams 100,000 lines over several
seconds and times shift+tab presses from the key event until the new mode is the engine's and
the status bar's, and a screen refresh has followed.

Why it is shaped this way:

- Each round runs in a fresh interpreter (this file with `--measure`), like the viewer bench:
  a round leaves thousands of widgets and events behind, and the next round's figure should
  not pay for collecting them. The child gets its own data and config directories.
- No `pilot.pause()` or `pilot.press()` in the timed parts: both wait for the CPU to go idle,
  which a streaming command never lets happen. Conditions are polled with short
  `asyncio.sleep`s, and "the screen has refreshed" is the public `Screen.wait_for_refresh()`.
- Everything slow to check (the queue's row texts, the conversation's lines on screen) is
  verified after the clock stops; the timed conditions are cheap counters that cannot be true
  before the drawing they stand for (the queue's row count, a line's region on the screen).
- A press's `cpu_ms` is this process's CPU time over the press: a slow press with little CPU
  was waiting for the machine (these are shared), not for the app's own work. Its `gc_ms` is
  the part of that spent in the cyclic garbage collector, the one slow press's cause before
  the app froze its long-lived objects out of collections (tui/collector.py).
- `--quick` (the smoke run) draws 40 calls and presses twice during a shorter stream.
- `--profile` on a flood measurement prints a cProfile summary to stderr, for when the target
  is missed: `python bench/bench_tui.py --measure flood --profile`.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from common import Benchmark, Figure

if TYPE_CHECKING:
    from core.agent.live import LiveSession
    from core.events import EngineEvent
    from tui.app import ProctorApp

ROOT = Path(__file__).resolve().parent.parent
SIZE = (120, 40)
POLL_S = 0.002

BATCH_CALLS = 4
"""Calls per parallel batch: they share a batch id and run together, as read-only calls do."""
CHUNK_EVENTS = 250
"""Events pushed between two yields to the event loop: a busy engine's burst."""
ASK_EVERY = 10
"""One call in this many asks for permission (asked, answered) instead of a second progress."""
STREAM_CHUNK_LINES = 1_000
STREAM_PAUSE_S = 0.06
PRESS_GAP_S = 0.2


@dataclass(frozen=True)
class Load:
    """How much a measurement does: the figures' load, or a smoke run's (`quick`)."""

    flood_calls: int
    flood_rounds: int
    stream_chunks: int
    presses: int

    @property
    def stream_command(self) -> str:
        """With the full load, 100,000 lines in chunks of 1,000 about 60 ms apart: ~6 s of
        output, still streaming for every press. (A bare `for` loop of `echo`s ends in half a
        second.)"""
        return (
            f"for i in $(seq 0 {self.stream_chunks - 1}); do "
            f"seq -f 'line %.0f' $((i * {STREAM_CHUNK_LINES} + 1)) "
            f"$(((i + 1) * {STREAM_CHUNK_LINES})); sleep {STREAM_PAUSE_S}; done"
        )

    @property
    def stream_lines(self) -> int:
        return self.stream_chunks * STREAM_CHUNK_LINES

    @property
    def stream_bytes(self) -> int:
        return sum(len(f"line {n}\n") for n in range(1, self.stream_lines + 1))


FULL = Load(flood_calls=2_000, flood_rounds=3, stream_chunks=100, presses=10)
QUICK = Load(flood_calls=40, flood_rounds=2, stream_chunks=50, presses=2)
"""Half the stream still outlasts two presses on a loaded machine by seconds."""


# -- the app --------------------------------------------------------------------------------


def _make_app(
    project: Path, turns: list[Any], prompt: str | None, allow: tuple[str, ...]
) -> ProctorApp:
    from core.agent.live import SessionOptions, prepare_session
    from tui.app import LaunchOptions, ProctorApp

    scenario = project / ".scenario.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "bench",
                "description": "a benchmark's script",
                "prompt": prompt or "go",
                "workspace": "cwd",
                "turns": turns,
            }
        )
    )
    prepared = prepare_session(
        SessionOptions(cwd=project, demo=True, scenario=str(scenario), demo_speed=0, allow=allow)
    )
    return ProctorApp(LaunchOptions(prepared, trust=True, first_prompt=prompt))


async def _until(condition: Any, what: str, limit_s: float = 60.0) -> None:
    deadline = time.perf_counter() + limit_s
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        await asyncio.sleep(POLL_S)


def _screen_text(app: ProctorApp) -> list[str]:
    """What the screen shows now, row by row (the compositor's strips, as the viewer bench)."""
    rows = app.screen._compositor.render_strips()
    return ["".join(segment.text for segment in row) for row in rows]


def _stop_activity_timer(app: ProctorApp) -> None:
    """Stop the app's once-a-second activity line before the app closes.

    Closing removes the main screen's widgets one by one; with thousands of tool lines that
    takes over a second, the timer fires into a screen without a status bar, and the app
    exits with NoMatches (tui/app.py `_show_activity`). Not what is measured here.
    """
    for timer in list(app._timers):
        if timer.name == "activity":
            timer.stop()


# -- the flood --------------------------------------------------------------------------------

_TOOLS = (
    ("Read", lambda n: {"file_path": f"/project/src/area{n // 40}/file{n}.py"}),
    ("Grep", lambda n: {"pattern": f"def handler_{n}", "path": f"src/area{n // 40}"}),
    ("Glob", lambda n: {"pattern": f"src/area{n // 40}/**/file{n}.py"}),
    ("Bash", lambda n: {"command": f"git log -n 3 --oneline -- src/area{n // 40}/file{n}.py"}),
)


class _CallFields(TypedDict):
    tool_use_id: str
    tool_name: str
    batch_id: str


def _summary(tool_input: dict[str, Any]) -> str:
    return str(next(iter(tool_input.values())))


def flood_events(calls: int = FULL.flood_calls) -> list[EngineEvent]:
    """What the engine emits for `calls` calls in parallel batches, in the order it would."""
    from core.access.decision import DecidedBy
    from core.events import (
        OutputProgress,
        PermissionAnswered,
        PermissionAsked,
        ToolCompleted,
        ToolProgress,
        ToolQueued,
        ToolStarted,
    )
    from core.ports import Approve, PermissionRequest

    events: list[EngineEvent] = []
    at = time.monotonic()
    for first in range(0, calls, BATCH_CALLS):
        batch_id = f"b{first // BATCH_CALLS}"
        numbers = range(first, min(first + BATCH_CALLS, calls))
        ids = {n: f"toolu_flood_{n:05d}" for n in numbers}
        fields: dict[int, _CallFields] = {
            n: {"tool_use_id": ids[n], "tool_name": _TOOLS[n % 4][0], "batch_id": batch_id}
            for n in numbers
        }
        inputs = {n: _TOOLS[n % 4][1](n) for n in numbers}
        # The stream completes each tool_use block in turn; each is queued at once.
        for n in numbers:
            at += 0.0005
            events.append(
                ToolQueued(
                    at=at,
                    input=inputs[n],
                    summary=_summary(inputs[n]),
                    concurrency_safe=True,
                    **fields[n],
                )
            )
        for n in numbers:
            at += 0.0002
            events.append(ToolStarted(at=at, **fields[n]))
        started = at
        for n in numbers:
            at += 0.001
            if n % ASK_EVERY == ASK_EVERY - 1:
                request = PermissionRequest(
                    tool_use_id=ids[n],
                    tool_name=_TOOLS[n % 4][0],
                    input=inputs[n],
                    summary=_summary(inputs[n]),
                    message="outside the project",
                    decided_by=DecidedBy("default", "no rule allows it"),
                )
                events.append(PermissionAsked(at=at, request=request, **fields[n]))
                events.append(PermissionAnswered(at=at + 0.2, answer=Approve(), **fields[n]))
            else:
                for tick in (1, 2):
                    text = "\n".join(
                        f"src/area{n // 40}/file{n}.py:{k}: match" for k in range(tick)
                    )
                    data = OutputProgress(
                        text=text,
                        total_bytes=40 * tick,
                        elapsed_s=0.1,
                        spool=Path("/tmp/bench-spool.txt"),
                    )
                    events.append(ToolProgress(at=at + tick * 0.001, data=data, **fields[n]))
        for n in numbers:
            at += 0.002
            events.append(
                ToolCompleted(at=at, duration_s=at - started, is_error=False, **fields[n])
            )
    return events


async def _flood_round(project: Path, load: Load) -> dict[str, Any]:
    from tui.turn_events import TurnStarted

    calls = load.flood_calls
    events = flood_events(calls)
    last_id = f"toolu_flood_{calls - 1:05d}"
    # Rows of the open turn: its header, then per parallel batch a header and its calls.
    batches = -(-calls // BATCH_CALLS)
    queue_rows = 1 + batches + calls
    app = _make_app(project, [[{"type": "text", "text": "idle"}]], None, ())
    deliveries: list[tuple[int, float]] = []
    async with app.run_test(size=SIZE):
        await _until(lambda: app.live is not None, "the session to open")
        # What `run_turn` does when a prompt is sent: not part of the timed flood.
        app.bridge(TurnStarted(prompt="flood"))
        await _until(lambda: app.bridge.pending == 0, "the prompt to be drawn")
        await app.screen.wait_for_refresh()

        deliver = app.bridge._deliver  # counted, to say how the flood was framed

        def counting(batch: list[EngineEvent]) -> None:
            began = time.perf_counter()
            deliver(batch)
            deliveries.append((len(batch), time.perf_counter() - began))

        app.bridge._deliver = counting
        conversation, queue = app.conversation, app.tool_queue
        book = app.book

        def drawn() -> bool:
            if app.bridge.pending or len(book.calls) < calls:
                return False
            if queue.virtual_size.height != queue_rows:
                return False
            line = conversation.tool_line(last_id)
            if line is None or not line.is_mounted or not line.region:
                return False  # a region is given only by a layout that includes the line
            return sum(r.state == "done" for r in book.calls.values()) == calls

        started = time.perf_counter()
        for first in range(0, len(events), CHUNK_EVENTS):
            for event in events[first : first + CHUNK_EVENTS]:
                app.bridge(event)
            await asyncio.sleep(0)
        pushed_s = time.perf_counter() - started
        await _until(drawn, "the flood to be drawn", limit_s=300)
        laid_out_s = time.perf_counter() - started
        await app.screen.wait_for_refresh()
        elapsed = time.perf_counter() - started

        # Checked after the clock stops: what a person would read on the screen.
        rows = queue.rows_text()
        lines = conversation.tool_lines()
        screen = _screen_text(app)
        # The last call's Bash command is cut short in the narrow queue; its Glob neighbour's
        # summary fits in both panes.
        last_file = f"file{calls - 2}.py"
        result: dict[str, Any] = {
            "elapsed_s": elapsed,
            "pushed_s": pushed_s,
            "laid_out_s": laid_out_s,
            "deliveries": len(deliveries),
            "deliver_s": sum(s for _, s in deliveries),
            "largest_delivery": max(n for n, _ in deliveries),
            "queue_header": rows[0],
            "queue_done_rows": sum("✓" in row for row in rows),
            "conversation_lines": len(lines),
            "conversation_done_lines": sum(line.state == "done" for line in lines),
            "last_call_on_screen": sum(last_file in row and "✓" in row for row in screen),
        }
        app.bridge._deliver = deliver
        _stop_activity_timer(app)
    ok = (
        f"{calls} calls" in rows[0]
        and result["queue_done_rows"] == calls
        and result["conversation_done_lines"] == calls
        and result["last_call_on_screen"] >= 2  # in the conversation and in the queue
    )
    if not ok:
        raise AssertionError(f"the flood was not all drawn: {result}")
    return result


# -- the key during a stream ------------------------------------------------------------------


class _CollectorClock:
    """CPU time spent in the cyclic garbage collector so far, by `gc.callbacks`."""

    def __init__(self) -> None:
        self.spent_s = 0.0
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.process_time()
        else:
            self.spent_s += time.process_time() - self._began


async def _key_round(project: Path, load: Load) -> dict[str, Any]:
    from textual import events

    from core.access.modes import MODE_LABELS
    from tui.calls import CallRecord

    turns = [
        [{"type": "tool_use", "name": "Bash", "input": {"command": load.stream_command}}],
        [{"type": "text", "text": "Streamed."}],
    ]
    app = _make_app(project, turns, "stream", ("Bash",))
    presses: list[dict[str, Any]] = []
    collector = _CollectorClock()
    gc.callbacks.append(collector)
    async with app.run_test(size=SIZE):
        await _until(lambda: len(app.book.calls) == 1, "the Bash call")
        (record,) = app.book.calls.values()
        await _until(lambda: record.output_bytes > 0, "the command's output")
        status = app.status_bar
        label = status.query_one("#status-mode")

        def streamed(call: CallRecord) -> int:
            # The highest line number in the shown tail: its last line may be half written.
            numbers = [line.split()[-1] for line in call.tail if line.startswith("line ")]
            return max((int(n) for n in numbers if n.isdigit()), default=0)

        for _ in range(load.presses):
            live = app.live
            assert live is not None
            before = live.mode
            lines_before, bytes_before = streamed(record), record.output_bytes
            started, cpu_started = time.perf_counter(), time.process_time()
            gc_started = collector.spent_s
            app.post_message(events.Key("shift+tab", None))

            def shown(live: LiveSession = live, before: str = before) -> bool:
                mode = live.mode
                if mode == before or status.mode != mode:
                    return False
                return str(label.render()) == MODE_LABELS.get(mode, mode)

            await _until(shown, "the new mode on the status bar", limit_s=10)
            await app.screen.wait_for_refresh()
            latency_ms = (time.perf_counter() - started) * 1000
            cpu_ms = (time.process_time() - cpu_started) * 1000
            word = MODE_LABELS[live.mode]
            bar = _screen_text(app)[-2]  # the status bar sits above the footer
            presses.append(
                {
                    "ms": round(latency_ms, 1),
                    "cpu_ms": round(cpu_ms, 1),
                    "gc_ms": round((collector.spent_s - gc_started) * 1000, 1),
                    "mode": live.mode,
                    "on_screen": word in bar,
                    "lines_streamed": lines_before,
                    "bytes_streamed": bytes_before,
                    "running": record.state == "running",
                }
            )
            await asyncio.sleep(PRESS_GAP_S)
        still_running = record.state == "running"
        lines_after = streamed(record)
        await _until(lambda: record.finished and app.bridge.pending == 0, "the command to end", 120)
        await app.shutdown()
    gc.callbacks.remove(collector)
    if not all(p["on_screen"] and p["running"] for p in presses) or not still_running:
        raise AssertionError(f"a press was not drawn or the command had stopped: {presses}")
    return {
        "presses": presses,
        "lines_after_last_press": lines_after,
        "output_bytes": record.output_bytes,
    }


# -- the figures ------------------------------------------------------------------------------


def _run_child(kind: str, quick: bool) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--measure", kind, *(["--quick"] if quick else [])],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"the {kind} measurement failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["load_average"] = round(os.getloadavg()[0], 2)
    return result


def event_flood(*, quick: bool = False) -> list[Figure]:
    load = QUICK if quick else FULL
    runs = [_run_child("flood", quick) for _ in range(load.flood_rounds)]
    best = min(runs, key=lambda r: r["elapsed_s"])
    details = {
        "calls": load.flood_calls,
        "events": len(flood_events(load.flood_calls)),
        "pushed": f"in chunks of {CHUNK_EVENTS} events with an event-loop yield between; "
        f"the bridge drew them in {best['deliveries']} frame(s)",
        "parallel_batches_of": BATCH_CALLS,
        "rounds_s": [round(r["elapsed_s"], 3) for r in runs],
        "load_average": [r["load_average"] for r in runs],
        "best": {k: _round(v) for k, v in best.items()},
    }
    return [
        Figure(
            "tui_event_flood_s",
            best["elapsed_s"],
            "s",
            "<=",
            2.0,
            f"{load.flood_calls} calls × 5 events into the running app (headless, 120×40) "
            "until every call is drawn in the queue and the conversation, best of "
            f"{load.flood_rounds} rounds, each in a fresh interpreter",
            details,
        )
    ]


def key_latency(*, quick: bool = False) -> list[Figure]:
    load = QUICK if quick else FULL
    run = _run_child("keys", quick)
    latencies = [p["ms"] for p in run["presses"]]
    details = {
        "median_ms": round(statistics.median(latencies), 1),
        "max_ms": max(latencies),
        "presses_ms": latencies,
        "lines_streamed_at_each_press": [p["lines_streamed"] for p in run["presses"]],
        "bytes_streamed_at_each_press": [p["bytes_streamed"] for p in run["presses"]],
        "cpu_ms_at_each_press": [p["cpu_ms"] for p in run["presses"]],
        "gc_ms_at_each_press": [p["gc_ms"] for p in run["presses"]],
        "lines_after_last_press": run["lines_after_last_press"],
        "output_bytes_in_all": run["output_bytes"],
        "all_lines_streamed": run["output_bytes"] == load.stream_bytes,
        "load_average": run["load_average"],
        "command": load.stream_command,
    }
    return [
        Figure(
            "tui_key_latency_ms",
            max(latencies),
            "ms",
            "<=",
            100.0,
            f"slowest of {load.presses} shift+tab presses, {PRESS_GAP_S} s apart, from the key "
            "event to the new mode drawn on the status bar, while a Bash call streams "
            f"{load.stream_lines:,} lines, one run",
            details,
        )
    ]


def _round(value: Any) -> Any:
    return round(value, 3) if isinstance(value, float) else value


BENCHMARKS = [
    Benchmark(("tui_event_flood_s",), event_flood),
    Benchmark(("tui_key_latency_ms",), key_latency),
]


def _measure(kind: str, profile: bool, load: Load) -> dict[str, Any]:
    """One round in this (fresh) interpreter, in a scratch project with its own data dirs."""
    sys.path.insert(0, str(ROOT))
    rounds = {"flood": _flood_round, "keys": _key_round}
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        os.environ.pop("ANTHROPIC_API_KEY", None)
        os.environ.update(
            PROCTOR_DATA_DIR=str(home / "data"),
            PROCTOR_CONFIG_DIR=str(home / "config"),
            HOME=str(home / "home"),
        )
        project = home / "project"
        project.mkdir()
        if not profile:
            return asyncio.run(rounds[kind](project, load))
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        try:
            result: dict[str, Any] = profiler.runcall(asyncio.run, rounds[kind](project, load))
        finally:
            stats = pstats.Stats(profiler, stream=sys.stderr)
            stats.sort_stats("cumulative").print_stats(60)
            stats.sort_stats("tottime").print_stats(40)
        return result


if __name__ == "__main__" and sys.argv[1:2] == ["--measure"]:
    flags = sys.argv[3:]
    print(
        json.dumps(
            _measure(sys.argv[2], "--profile" in flags, QUICK if "--quick" in flags else FULL)
        )
    )
