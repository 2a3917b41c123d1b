"""A headless process's start and end: the collector pause changes only the process that
paused it, and leaving loses nothing printed."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

from core.agent import lifespan

ROOT = Path(__file__).resolve().parents[3]


def test_start_up_done_leaves_a_collector_it_did_not_pause_alone():
    frozen = gc.get_freeze_count()
    assert gc.isenabled()
    lifespan.start_up_done()  # what run_headless calls inside a test or an app
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_a_paused_start_resumes_collecting_with_start_up_kept_out():
    # In a fresh interpreter: freezing this test process's objects would outlive the test.
    script = (
        "import gc; from core.agent import lifespan\n"
        "lifespan.pause_collector(); assert not gc.isenabled()\n"
        "lifespan.start_up_done(); assert gc.isenabled() and gc.get_freeze_count() > 0\n"
        "import sys; sys.stdout.write('the last words, never flushed')\n"
        "lifespan.leave(3)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 3, result.stderr
    assert result.stdout == "the last words, never flushed"  # os._exit flushes nothing
