"""Bash tool benchmarks: a command printing 1 GB, for memory and for time.

- `bash_1gb_rss_mb`: the peak-RSS growth (VmHWM) of a fresh Python process across one Bash
  call whose command prints 1 GB; the result must come back persisted with a preview.
- `bash_1gb_wall_ratio`: that call's wall time over the same command's into /dev/null.

Each tool run happens in its own interpreter, so that the high-water mark is this call's and
nothing else's. The rounds interleave the tool with its baselines and the best of each is
compared, since the machine is shared. Capturing 1 GB means writing 1 GB to disk, which
/dev/null never does; the details therefore also give the same command redirected to a file
in the same directory (`floor_*`), the least any capture could cost on this disk.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from common import Benchmark, Figure

ROOT = Path(__file__).resolve().parents[1]
SIZE = 1_000_000_000
QUICK_SIZE = 20_000_000
LINE = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abc"
ROUNDS = 3


def command(size: int) -> str:
    return f"yes {LINE} | head -c {size}"


CHILD = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from pathlib import Path
    from core.tool import ToolContext, ToolOptions
    from core.tools.bash import Bash

    def hwm_kb():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise RuntimeError("no VmHWM in /proc/self/status")

    async def main(session_dir, command):
        Path(session_dir).mkdir(parents=True, exist_ok=True)
        tool = Bash()
        context = ToolContext(
            cwd=Path(session_dir), options=ToolOptions(session_dir=Path(session_dir)),
            tool_use_id="toolu_bench",
        )
        parsed = tool.parse_input({"command": command})
        events = []
        before = hwm_kb()
        started = time.perf_counter()
        result = await tool.call(parsed, context, events.append)
        wall = time.perf_counter() - started
        after = hwm_kb()
        text = tool.result_block(result, "toolu_bench")["content"]
        path = result.data.output_path
        print(json.dumps({
            "growth_mb": (after - before) / 1024,
            "wall_s": wall,
            "persisted": text.startswith("<persisted-output>") and "Preview (first" in text,
            "result_chars": len(text),
            "saved_bytes": path.stat().st_size if path else 0,
            "progress_events": len(events),
            "is_error": result.is_error,
        }))
        if path:
            path.unlink()

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


def _tool_round(work: Path, size: int) -> dict[str, Any]:
    session = work / "session"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(session), command(size)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    shutil.rmtree(session, ignore_errors=True)
    if done.returncode != 0:
        raise RuntimeError(f"the benchmark's child process failed:\n{done.stderr}")
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _command_wall(stdout: Path, size: int) -> float:
    started = time.perf_counter()
    with open(stdout, "wb") as sink:
        subprocess.run(["bash", "-c", command(size)], stdout=sink, check=True)
    return time.perf_counter() - started


def bash_1gb(*, quick: bool = False) -> list[Figure]:
    size, rounds = (QUICK_SIZE, 2) if quick else (SIZE, ROUNDS)
    work = Path(tempfile.mkdtemp(prefix="proctor-bench-bash-", dir=tempfile.gettempdir()))
    floor_file = work / "floor.txt"
    try:
        # Warm up: the first gigabyte through the page cache is slower.
        _command_wall(floor_file, size)
        floor_file.unlink()
        tools, nulls, floors = [], [], []
        for _ in range(rounds):
            nulls.append(_command_wall(Path("/dev/null"), size))
            tools.append(_tool_round(work, size))
            floors.append(_command_wall(floor_file, size))
            floor_file.unlink()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    growth = max(t["growth_mb"] for t in tools)
    tool_wall = min(t["wall_s"] for t in tools)
    null_wall, floor_wall = min(nulls), min(floors)
    all_persisted = all(t["persisted"] and t["saved_bytes"] == size for t in tools)
    details = {
        "rounds": rounds,
        "bytes_printed": size,
        "persisted_with_preview": all_persisted,
        "result_chars": tools[0]["result_chars"],
        "progress_events": [t["progress_events"] for t in tools],
        "tool_walls_s": [round(t["wall_s"], 6) for t in tools],
        "devnull_walls_s": [round(w, 6) for w in nulls],
        "floor_file_walls_s": [round(w, 6) for w in floors],
        "floor_ratio_file_over_devnull": round(floor_wall / null_wall, 3),
        "tool_over_floor_ratio": round(tool_wall / floor_wall, 3),
        "rss_growth_mb_per_round": [round(t["growth_mb"], 2) for t in tools],
    }
    rss = growth if all_persisted else float("inf")  # a run that did not persist has failed
    return [
        Figure(
            "bash_1gb_rss_mb",
            rss,
            "MB",
            "<=",
            150,
            f"peak RSS growth of a fresh process across a Bash call printing {size / 1e9:g} GB, "
            f"the worst of {rounds}; the result persisted with a preview",
            details,
        ),
        Figure(
            "bash_1gb_wall_ratio",
            tool_wall / null_wall,
            "x",
            "<=",
            2.0,
            f"best Bash-tool wall for the {size / 1e9:g} GB command over the best wall of the "
            f"same command into /dev/null, {rounds} rounds of each, interleaved",
            details,
        ),
    ]


BENCHMARKS = [Benchmark(("bash_1gb_rss_mb", "bash_1gb_wall_ratio"), bash_1gb)]
