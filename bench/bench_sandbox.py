"""Sandbox benchmarks: what the kernel fence costs a command, and what finding it costs.

- `sandbox_overhead_ms`: the median added wall time of `true` through the Bash tool in the
  read-only sandbox over the same call outside it, 50 runs each, interleaved so that both
  sides see the same machine. The sandboxed side includes building the fence (the Landlock
  ruleset, the mounts, the seccomp filter), the namespaces, and its clean-up.
- `sandbox_probe_ms`: the start-up probe (`core.sandbox.support.probe`), median of 9 runs.
  It runs on a thread once the session opens, never before the first frame; the details
  say what it found.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from common import Benchmark, Figure

RUNS = 50
PROBES = 9


async def _overhead(runs: int) -> tuple[list[float], list[float], str]:
    from core.access.sandbox_policy import ReadOnly, Unsandboxed
    from core.permissions.session_sandbox import SANDBOX, SessionSandbox
    from core.sandbox.support import probe
    from core.session_services import SessionServices
    from core.settings.sandbox import SandboxSettings
    from core.tool import ToolContext, ToolOptions
    from core.tools.bash import Bash

    support = probe()
    with tempfile.TemporaryDirectory(prefix="proctor-bench-sandbox-") as folder:
        project = Path(folder) / "project"
        project.mkdir()
        sandbox = SessionSandbox(SandboxSettings(), project=project, support=support)
        tool = Bash()
        parsed = tool.parse_input({"command": "true"})
        services = SessionServices()
        services.provide(SANDBOX, sandbox)
        base = ToolContext(cwd=project, options=ToolOptions(services=services))
        fenced = base.replace(sandbox=ReadOnly("bench"), tool_use_id="toolu_fenced")
        plain = base.replace(sandbox=Unsandboxed("bench"), tool_use_id="toolu_plain")
        sandboxed_ms: list[float] = []
        unsandboxed_ms: list[float] = []
        for context in (fenced, plain):
            await tool.call(parsed, context, lambda _: None)  # warm both sides
        for _ in range(runs):
            for context, times in ((fenced, sandboxed_ms), (plain, unsandboxed_ms)):
                started = time.perf_counter()
                result = await tool.call(parsed, context, lambda _: None)
                times.append((time.perf_counter() - started) * 1000)
                if result.is_error:
                    raise RuntimeError(f"`true` failed: {result.data}")
        await services.close()  # the sandbox and the shells
    return sandboxed_ms, unsandboxed_ms, support.strength()


def bench_overhead(*, quick: bool = False) -> list[Figure]:
    runs = 3 if quick else RUNS
    sandboxed, unsandboxed, strength = asyncio.run(_overhead(runs))
    added = statistics.median(sandboxed) - statistics.median(unsandboxed)
    return [
        Figure(
            "sandbox_overhead_ms",
            added,
            "ms",
            "<=",
            10,
            f"median of {runs} sandboxed `true` through the Bash tool minus the median of "
            f"{runs} unsandboxed, interleaved",
            {
                "sandboxed_median_ms": round(statistics.median(sandboxed), 2),
                "unsandboxed_median_ms": round(statistics.median(unsandboxed), 2),
                "strength": strength,
            },
        )
    ]


def bench_probe(*, quick: bool = False) -> list[Figure]:
    from core.sandbox.support import probe

    runs = [probe() for _ in range(2 if quick else PROBES)]
    last = runs[-1]
    return [
        Figure(
            "sandbox_probe_ms",
            statistics.median(r.probe_ms for r in runs),
            "ms",
            "<=",
            20,
            f"median of {len(runs)} start-up probes (each runs /bin/true inside a real fence); "
            "on a thread after the first frame",
            {
                "landlock_abi": last.landlock_abi,
                "namespaces": last.namespaces,
                "seccomp": last.seccomp,
                "problem": last.problem,
            },
        )
    ]


BENCHMARKS = [
    Benchmark(("sandbox_overhead_ms",), bench_overhead),
    Benchmark(("sandbox_probe_ms",), bench_probe),
]
