"""The saved-output viewer opening a 1 GB file: time to the first screen, and memory.

Why it is shaped this way: the measurement runs in a fresh interpreter (this file, run as a
script with `--measure`), so the memory figure is that process's own peak (`VmHWM`) over its
resident size just before the viewer is pushed, unspoiled by whatever the benchmark runner
imported or generated before. The peak is read after the background line count has gone
through the whole file, so it covers indexing, not only the first frame. The file is written
once per run from a 1 MB block of varied lines and deleted afterwards.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import Benchmark, Figure

from core.results import format_size

REPO = Path(__file__).resolve().parent.parent
FILE_BYTES = 1024**3
QUICK_FILE_BYTES = 16 * 1024**2
RUNS = 2
BLOCK_BYTES = 1024**2
POLL_S = 0.002


def _write_big_file(path: Path, file_bytes: int) -> int:
    lines, size, n = [], 0, 0
    while size < BLOCK_BYTES:
        line = f"{n:07d} worker-{n % 7} {'x' * (n * 13 % 120)} status={n * 31 % 997}\n"
        lines.append(line)
        size += len(line)
        n += 1
    block = "".join(lines).encode()[:BLOCK_BYTES]
    block = block[: block.rfind(b"\n") + 1]
    written = 0
    with open(path, "wb") as file:
        while written < file_bytes:
            file.write(block)
            written += len(block)
    return written


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


async def _measure(path: Path) -> dict[str, Any]:
    sys.path.insert(0, str(REPO))
    from textual.app import App

    from tui.screens.viewer import OutputViewerScreen
    from tui.theme_vars import THEME_VARIABLE_DEFAULTS
    from tui.viewer import SavedOutputEntry, scan_saved_outputs
    from tui.viewer.file_view import FileView

    counted = asyncio.Event()

    class Host(App[None]):
        def get_theme_variable_defaults(self) -> dict[str, str]:
            return dict(THEME_VARIABLE_DEFAULTS)

        def on_file_view_index_advanced(self, event: FileView.IndexAdvanced) -> None:
            if event.complete:
                counted.set()

    [output] = scan_saved_outputs(path.parent.parent)
    first_line = output.first_line
    app = Host()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        rss_before_kb = _status_kb("VmRSS")
        started = time.perf_counter()
        app.push_screen(OutputViewerScreen(SavedOutputEntry(output, "Bash")))
        rendered = False
        while not rendered:
            # Not pilot.pause(): it waits for the CPU to go idle, and counting keeps it busy.
            await asyncio.sleep(POLL_S)
            if isinstance(app.screen, OutputViewerScreen):
                rows = app.screen._compositor.render_strips()
                rendered = any(
                    first_line in "".join(segment.text for segment in row) for row in rows
                )
        open_s = time.perf_counter() - started
        await counted.wait()
        view = app.screen.query_one(FileView)
        counted_s = time.perf_counter() - started
        lines = view.line_count
        complete = view.index is not None and view.index.is_complete
        peak_kb = _status_kb("VmHWM")
    return {
        "open_s": open_s,
        "counted_s": counted_s,
        "lines": lines,
        "complete": complete,
        "rss_before_mb": rss_before_kb / 1024,
        "rss_growth_mb": (peak_kb - rss_before_kb) / 1024,
    }


def viewer_open(*, quick: bool = False) -> list[Figure]:
    file_bytes, count = (QUICK_FILE_BYTES, 2) if quick else (FILE_BYTES, RUNS)
    with tempfile.TemporaryDirectory() as folder:
        results = Path(folder) / "session" / "tool-results"
        results.mkdir(parents=True)
        path = results / "toolu_big.txt"
        size = _write_big_file(path, file_bytes)
        runs: list[dict[str, Any]] = []
        for _ in range(count):
            done = subprocess.run(
                [sys.executable, __file__, "--measure", str(path)],
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        path.unlink()
    details = {"file_bytes": size, "runs": [{k: _round(v) for k, v in r.items()} for r in runs]}
    return [
        Figure(
            "viewer_open_1gb_s",
            min(r["open_s"] for r in runs),
            "s",
            "<=",
            1.0,
            f"push of the viewer on a {format_size(size)} file to its first screen of lines, "
            f"headless; best of {count} runs, each in a fresh interpreter",
            details,
        ),
        Figure(
            "viewer_open_1gb_rss_mb",
            max(r["rss_growth_mb"] for r in runs),
            "MB",
            "<=",
            100.0,
            f"peak RSS growth opening and counting every line of a {format_size(size)} file, "
            f"the worst of {count} runs",
            details,
        ),
    ]


def _round(value: Any) -> Any:
    return round(value, 3) if isinstance(value, float) else value


BENCHMARKS = [Benchmark(("viewer_open_1gb_s", "viewer_open_1gb_rss_mb"), viewer_open)]


if __name__ == "__main__" and sys.argv[1:2] == ["--measure"]:
    print(json.dumps(asyncio.run(_measure(Path(sys.argv[2])))))
