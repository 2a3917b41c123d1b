"""A headless run's process: started and ended without the interpreter's slow parts.

- Start-up: importing the SDK makes some 180,000 objects, and the cyclic garbage collector
  walks all of them again and again as the heap grows (one full pass is ~0.1 s), which makes
  a start ~15% slower. Nothing start-up makes is garbage worth a pass (modules, classes, the
  session), so `pause_collector` stops the collector at the very start of a headless run
  and `start_up_done` freezes what exists by then (it is never walked again) and resumes the
  collector for the run itself. The few cycles start-up drops stay in memory: a bounded,
  one-off cost. Only a process that paused the collector freezes it: a test or an app that
  calls `run_headless` keeps its own collector as it was.
- The exit: after the result, tearing down the interpreter (thousands of modules, every
  object finalised) takes ~0.5 s and does nothing a finished run needs. `leave` flushes
  stdout and stderr and ends the process with `os._exit`; the caller first closes the
  session (transcript, audit log, shells, MCP servers), so nothing is lost.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import NoReturn

_paused = False


def pause_collector() -> None:
    """Start-up begins: no garbage collection until `start_up_done`."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def start_up_done() -> None:
    """The session is open: what start-up made is kept out of every later collection, and
    the collector runs again. Does nothing unless `pause_collector` paused it."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def leave(status: int) -> NoReturn:
    """End the process now with `status`, once what it printed is out."""
    for stream in (sys.stdout, sys.stderr):
        # The reader went away (OSError), or the stream was closed (ValueError).
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
