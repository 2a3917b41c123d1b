"""The saved-output viewer's model: line indexing and the session's saved files.

Pure Python with no Textual or Rich import, so it can be tested and benchmarked on its own;
the widget (`file_view.py`) and the screens (`tui/screens/outputs.py`, `viewer.py`) sit on it.
"""

from __future__ import annotations

from .line_index import LineIndex, lines_known_text
from .saved import SavedOutput, SavedOutputEntry, human_size, scan_saved_outputs

__all__ = [
    "LineIndex",
    "SavedOutput",
    "SavedOutputEntry",
    "human_size",
    "lines_known_text",
    "scan_saved_outputs",
]
