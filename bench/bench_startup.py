"""How fast proctor starts: `proctor --version`, and the app's first frame in a real terminal.

`startup_version_s` runs the installed `proctor --version` as a user would and also checks,
with `-X importtime`, that it imported neither textual nor anthropic.

`tui_first_frame_ratio` starts `proctor --demo` and a bare Textual app on a pseudo-terminal
(120×40) and times each from launch until its first screen reaches the terminal (a marker
text is written). The ratio, not the raw time, is the figure: both pay for Python and
Textual, so it measures what proctor adds on top. proctor's own modules are compiled to
bytecode first, as an installed proctor's are: on a host that sets PYTHONDONTWRITEBYTECODE
(these do) every launch would otherwise compile them from source, some 30 ms that Textual's
compiled modules never pay and no user sees.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import sysconfig
import tempfile
import termios
import time
from pathlib import Path

from common import Benchmark, Figure

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 5
FRAME_ROUNDS = 9
"""First frames vary by ±0.1 s from run to run on a shared host: the best of more runs of
each, interleaved, is what compares them."""

BARE_APP = """
from textual.app import App
from textual.widgets import Footer, Static

class Bare(App):
    def compose(self):
        yield Static("bare app ready")
        yield Footer()

Bare().run()
"""


def _proctor() -> list[str]:
    script = Path(sysconfig.get_path("scripts")) / "proctor"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui"]


def _environment(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("ANTHROPIC_API_KEY", None)
    env.update(
        TERM="xterm-256color",
        COLUMNS="120",
        LINES="40",
        PROCTOR_DATA_DIR=str(home / "data"),
        PROCTOR_CONFIG_DIR=str(home / "config"),
        PYTHONPATH=str(ROOT),
    )
    return env


def startup_version(*, quick: bool = False) -> list[Figure]:
    rounds = 2 if quick else ROUNDS
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run([*_proctor(), "--version"], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    trace = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tui", "--version"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stderr
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in trace.splitlines()}
    heavy = sorted(imported & {"textual", "anthropic", "rich", "httpx2"})
    return [
        Figure(
            "startup_version_s",
            min(times) if not heavy else float("inf"),
            "s",
            "<=",
            0.3,
            f"`proctor --version`, best of {rounds}, importing neither textual nor anthropic",
            {"runs_s": [round(t, 3) for t in times], "heavy_imports": heavy},
        )
    ]


def _time_to_marker(argv: list[str], marker: bytes, env: dict[str, str], cwd: Path) -> float:
    """Seconds from launch until `marker` appears on the pseudo-terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=True
    )
    os.close(slave)
    seen = b""
    try:
        while True:
            remaining = 60 - (time.perf_counter() - started)
            if remaining <= 0:
                raise TimeoutError(f"{argv[0]} drew no {marker!r} in 60 s: {seen[-300:]!r}")
            ready, _, _ = select.select([master], [], [], remaining)
            if not ready:
                continue
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                raise RuntimeError(f"{argv[0]} exited before drawing: {seen[-300:]!r}")
            seen += chunk
            if marker in seen:
                return time.perf_counter() - started
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        os.close(master)


def _compile_bytecode() -> None:
    """proctor's modules as an installed copy has them: compiled once, not at each launch."""
    import compileall

    for package in ("core", "tui", "themes"):
        compileall.compile_dir(ROOT / package, quiet=1)


def first_frame_ratio(*, quick: bool = False) -> list[Figure]:
    _compile_bytecode()
    rounds = 1 if quick else FRAME_ROUNDS
    bare_times, proctor_times = [], []
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        env = _environment(home)
        for _ in range(rounds):
            bare_times.append(
                _time_to_marker([sys.executable, "-c", BARE_APP], b"bare app ready", env, home)
            )
            proctor_times.append(_time_to_marker([*_proctor(), "--demo"], b"Tool calls", env, home))
    bare, proctor = min(bare_times), min(proctor_times)
    return [
        Figure(
            "tui_first_frame_ratio",
            proctor / bare,
            "ratio",
            "<=",
            1.5,
            "time to the first frame of `proctor --demo` over a bare Textual app's, "
            f"best of {rounds} each, interleaved, on a 120×40 pseudo-terminal",
            {
                "proctor_s": round(proctor, 3),
                "bare_s": round(bare, 3),
                "proctor_runs_s": [round(t, 3) for t in proctor_times],
                "bare_runs_s": [round(t, 3) for t in bare_times],
                "bytecode": "proctor's modules compiled before timing",
            },
        )
    ]


BENCHMARKS = [
    Benchmark(("startup_version_s",), startup_version),
    Benchmark(("tui_first_frame_ratio",), first_frame_ratio),
]
