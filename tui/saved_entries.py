"""The saved-output list as the app knows it: files on disk, named by the calls that made them.

The directory says what exists (tui/viewer/saved.py); the call book says which tool and
input produced each file, and which commands are still spooling, so a running command's
output is listed as running and opens in follow mode.
"""

from __future__ import annotations

from pathlib import Path

from .calls import CallBook, CallRecord
from .viewer.saved import SavedOutputEntry, scan_saved_outputs


def resolved(path: Path | None) -> Path | None:
    """`path` resolved, or None when it cannot be (a result's text names it, and a tool's
    output may contain anything, a NUL byte included)."""
    if path is None:
        return None
    try:
        return path.resolve()
    except (OSError, ValueError):
        return None


def saved_output_entries(session_dir: Path, book: CallBook) -> list[SavedOutputEntry]:
    by_path: dict[Path, CallRecord] = {}
    live_spools: list[Path] = []
    for record in book.calls.values():
        for path in (resolved(record.persisted), resolved(record.spool)):
            if path is not None:
                by_path[path] = record
        if record.spool is not None and not record.finished and resolved(record.spool):
            live_spools.append(record.spool)
    entries = []
    for output in scan_saved_outputs(session_dir, live_spools=live_spools):
        call = by_path.get(output.path.resolve()) or book.calls.get(output.tool_use_id)
        if call is None:
            entries.append(SavedOutputEntry.from_output(output))
            continue
        name = f"{call.display_name} (running)" if output.running else call.display_name
        entries.append(SavedOutputEntry(output, name, call.summary))
    return entries
