"""How fast a headless run starts and stops, against a real local Messages server.

A tiny threaded `http.server` in this process speaks the Messages SSE protocol and answers
every request with the same scripted text-only reply. `proctor -p ... --output-format
stream-json` runs as a user would run it (the installed script, a subprocess), pointed at
that server through ANTHROPIC_BASE_URL with a dummy key, in a scratch project with its own
data and config directories.

- `headless_first_request_ratio`: launch until the server receives the first request, over
  launch until a bare `python -c "import anthropic"` has imported the SDK (it prints a line
  then; its own interpreter teardown is not counted). Each round runs one of each back to
  back (alternating which goes first), so the machine's load falls on both alike; the
  figure is the median of the rounds' ratios (the medians of each are in the details).
  The details add the same ratio in CPU time (the process's own, read from /proc when its
  request arrives, against the bare import's `time.process_time()`): on a shared machine
  the wall ratio swings with the load, the CPU ratio much less.
- `headless_exit_ms`: from the moment the `result` record is read from proctor's stdout
  until the process has exited (median).

Both come from the same runs. A run whose output has no result record, or whose exit status
is not 0, stops the benchmark with what it printed: the figures are not made.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from common import Benchmark, Figure

ROUNDS = 9
"""Runs of each kind, interleaved, after one of each not counted (it warms the disk cache)."""
TIMEOUT_S = 120.0
REPLY = "The scripted server says hello."

BARE_IMPORT = (
    "import anthropic, sys, time; sys.stdout.write(f'imported {time.process_time()}\\n'); "
    "sys.stdout.flush()"
)


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def scripted_reply(model: str) -> bytes:
    """A whole streamed text-only message, as the Messages API sends it."""
    usage = {"input_tokens": 12, "output_tokens": 7}
    message = {
        "id": "msg_bench_0001",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return b"".join(
        [
            _sse("message_start", {"type": "message_start", "message": message}),
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": REPLY},
                },
            ),
            _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 7},
                },
            ),
            _sse("message_stop", {"type": "message_stop"}),
        ]
    )


class ScriptedServer:
    """A local Messages endpoint that notes when each request arrives (perf_counter)."""

    def __init__(self) -> None:
        self.received: list[float] = []
        self.watched: int | None = None
        """The process whose CPU time is read when its first request arrives."""
        self.cpu_at_first: dict[int, float] = {}
        self.paths: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                server.received.append(time.perf_counter())
                pid = server.watched
                if pid is not None and pid not in server.cpu_at_first:
                    server.cpu_at_first[pid] = _cpu_seconds(pid)
                server.paths.append(self.path)
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = scripted_reply(str(body.get("model", "bench-model")))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(reply)))
                self.send_header("request-id", "req_bench")
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far (Linux; NaN elsewhere)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return float("nan")
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proctor() -> list[str]:
    script = Path(sysconfig.get_path("scripts")) / "proctor"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui"]


def _environment(home: Path, base_url: str) -> dict[str, str]:
    env = dict(os.environ)
    # As a user runs it: with proctor's bytecode cached (the uncounted first run writes it).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        ANTHROPIC_API_KEY="sk-ant-bench-dummy",
        ANTHROPIC_BASE_URL=base_url,
        PROCTOR_DATA_DIR=str(home / "data"),
        PROCTOR_CONFIG_DIR=str(home / "config"),
    )
    return env


def _headless_run(
    server: ScriptedServer, env: dict[str, str], cwd: Path
) -> tuple[float, float, float]:
    """(launch → first request, result record read → exit, CPU time by the first request),
    in seconds."""
    before = len(server.received)
    with tempfile.TemporaryFile() as errors:
        launched = time.perf_counter()
        process = subprocess.Popen(
            [*_proctor(), "-p", "say hello", "--output-format", "stream-json"],
            stdout=subprocess.PIPE,
            stderr=errors,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        server.watched = process.pid
        assert process.stdout is not None
        result_read = None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if json.loads(line).get("type") == "result":
                result_read = time.perf_counter()
                break
        status = process.wait(timeout=TIMEOUT_S)
        exited = time.perf_counter()
        rest = process.stdout.read()
        process.stdout.close()
        errors.seek(0)
        said = errors.read().decode(errors="replace")
    if result_read is None or status != 0 or rest or len(server.received) == before:
        raise RuntimeError(
            f"the headless run failed (status {status}, {len(server.received) - before} "
            f"requests):\n{b''.join(lines).decode()}{rest.decode()}\n{said}"
        )
    cpu = server.cpu_at_first.pop(process.pid, float("nan"))
    return server.received[before] - launched, exited - result_read, cpu


def _bare_import(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Launch until `python -c "import anthropic"` has imported it, and the CPU time that
    took, in seconds."""
    launched = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", BARE_IMPORT], stdout=subprocess.PIPE, env=env, cwd=cwd
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    imported = time.perf_counter()
    process.stdout.close()
    if process.wait(timeout=TIMEOUT_S) != 0 or not line.startswith(b"imported "):
        raise RuntimeError("`python -c 'import anthropic'` failed")
    return imported - launched, float(line.split()[1])


def headless_figures(*, quick: bool = False) -> list[Figure]:
    rounds = 2 if quick else ROUNDS
    firsts, exits, bares, first_cpus, bare_cpus = [], [], [], [], []
    with tempfile.TemporaryDirectory() as folder, ScriptedServer() as server:
        home = Path(folder)
        project = home / "project"
        project.mkdir()
        env = _environment(home, server.url)
        for round_ in range(rounds + 1):
            # Alternate which goes first, so neither always follows the other's disk reads.
            if round_ % 2:
                bare, bare_cpu = _bare_import(env, project)
                first, exit_, first_cpu = _headless_run(server, env, project)
            else:
                first, exit_, first_cpu = _headless_run(server, env, project)
                bare, bare_cpu = _bare_import(env, project)
            if round_ == 0:
                continue
            firsts.append(first)
            exits.append(exit_)
            bares.append(bare)
            first_cpus.append(first_cpu)
            bare_cpus.append(bare_cpu)
        paths = sorted(set(server.paths))
    first, bare, exit_ = (statistics.median(x) for x in (firsts, bares, exits))
    ratios = [f / b for f, b in zip(firsts, bares, strict=True)]
    cpu_ratios = [f / b for f, b in zip(first_cpus, bare_cpus, strict=True)]
    runs = {
        # CPU time, not wall: what a loaded machine's waiting cannot blur (clock ticks, 10 ms).
        "cpu_ratio": round(statistics.median(cpu_ratios), 3),
        "first_request_s": round(first, 3),
        "bare_import_s": round(bare, 3),
        "first_request_runs_s": [round(t, 3) for t in firsts],
        "bare_import_runs_s": [round(t, 3) for t in bares],
        "ratio_runs": [round(r, 3) for r in ratios],
        "cpu_ratio_runs": [round(r, 3) for r in cpu_ratios],
    }
    return [
        Figure(
            "headless_first_request_ratio",
            statistics.median(ratios),
            "ratio",
            "<=",
            1.15,
            "launch of `proctor -p` to its first request reaching a local server, over launch "
            f"of `python -c 'import anthropic'` to the SDK imported; median of {rounds} "
            "pairs' ratios, run back to back after one uncounted pair",
            {"server_paths": paths, **runs},
        ),
        Figure(
            "headless_exit_ms",
            exit_ * 1000,
            "ms",
            "<=",
            50,
            f"result record read to process exit, median of {rounds} runs",
            {"runs_ms": [round(t * 1000, 1) for t in exits]},
        ),
    ]


BENCHMARKS = [
    Benchmark(("headless_first_request_ratio", "headless_exit_ms"), headless_figures),
]
