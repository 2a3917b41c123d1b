"""Watching a foreground command until it exits, times out, or is aborted.

The watcher never reads the command's output stream (it goes straight to the spool): every
`poll_s` it checks the spool's size and, when that has grown, reports the size and the text of
the last few KB as progress. A progress display that fails is ignored rather than allowed to
take the command down. What ended the wait is the `StopReason`; stopping the processes and
following a `cd` are the session's part (`session.py`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ...abort import AbortSignal
from ...events import OutputProgress
from .process import ShellProcess
from .spools import decode_output, file_size, read_tail

StopReason = Literal["exited", "timeout", "aborted"]
PROGRESS_TAIL_BYTES = 4_096


@dataclass(frozen=True, slots=True)
class Finished:
    """A foreground command that has ended; the caller owns (and must remove) `spool`."""

    returncode: int | None
    stopped: StopReason
    spool: Path
    size_bytes: int
    cwd: Path
    """The directory the command ran in."""
    notes: tuple[str, ...] = ()
    sandbox_failure: str | None = None
    """Why the sandbox could not be set up: then the command never ran."""


class ProgressReporter:
    """Reports the spool's growth: its size and the text of its last few KB."""

    def __init__(self, spool: Path, progress: Callable[[Any], None]) -> None:
        self.spool = spool
        self.progress = progress
        self.started = time.monotonic()
        self.reported = 0

    def tick(self) -> None:
        size = file_size(self.spool)
        if size == self.reported:
            return
        self.reported = size
        try:
            data, cut = read_tail(self.spool, PROGRESS_TAIL_BYTES)
            self.progress(
                OutputProgress(
                    text=decode_output(data, cut_in_front=cut),
                    total_bytes=size,
                    elapsed_s=round(time.monotonic() - self.started, 1),
                    spool=self.spool,
                )
            )
        except Exception:  # a broken display must not take the command down
            return


async def supervise(
    process: ShellProcess,
    timeout_s: float,
    abort: AbortSignal,
    reporter: ProgressReporter,
    poll_s: float,
) -> StopReason:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    exited = asyncio.ensure_future(process.process.wait())
    aborted = asyncio.ensure_future(abort.wait())
    try:
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return "timeout"
            done, _ = await asyncio.wait(
                (exited, aborted), timeout=min(poll_s, remaining), return_when="FIRST_COMPLETED"
            )
            if exited in done:
                return "exited"
            if aborted in done:
                return "aborted"
            reporter.tick()
    finally:
        exited.cancel()
        aborted.cancel()
