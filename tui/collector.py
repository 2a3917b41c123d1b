"""When Python's cyclic garbage collector runs in the app, and over what.

Why this exists: once the engine is loaded the process holds over 200,000 objects that live
as long as it does (Textual, rich, pydantic, anthropic, tree-sitter, the tools). CPython's
oldest-generation pass walks every one of them, 100–160 ms of one core, and it comes
whenever enough new objects have survived, which a streaming command's events, strips and
timers see to within seconds. A key pressed then waits for the whole pass: that was the one
slow press in ten of `tui_key_latency_ms`.

So, around start-up:

- `hold_until_first_frame()` (the `proctor` command, before the app is imported) and
  `release_after_first_frame()` (the app, once its first frame is drawn): no cyclic
  collection while the app's modules import and the first screen is built. Those make few
  cycles worth collecting, and every pass then is time before the person sees anything.
- `freeze_long_lived()` (the app, once its session is open): what is alive now is moved
  out of the collector's sight, so later passes walk only what came after. Frozen objects
  are still freed as soon as nothing refers to them; only a cycle among them is kept for
  good. The engine loads with the collector running, so little garbage is frozen with it.

They are process-wide, so they are plain functions; the one flag says whether the collector
was switched off here, so that it is never switched on behind someone else's back.
"""

from __future__ import annotations

import gc

_held = False


def hold_until_first_frame() -> None:
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release_after_first_frame() -> None:
    global _held
    if _held:
        _held = False
        gc.enable()


def freeze_long_lived() -> None:
    """Collections no longer walk the objects alive now (the app's, the engine's)."""
    gc.freeze()
