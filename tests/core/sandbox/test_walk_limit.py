"""A search of the project for what a rule covers either sees every entry or refuses.

A walk that stopped quietly at its bound would leave a denied file outside the fence; the
mutation run found the count itself untested (`seen = 1` for `seen += 1` survived), so the
bound is checked on both sides of the edge here, with the limit made small.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.sandbox import fence as fence_module
from core.sandbox.fence import DirectoryIndex


def _tree(root: Path, files: int) -> None:
    for n in range(files):
        (root / f"f{n}").write_text("x")


def test_a_tree_at_the_bound_is_walked_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(fence_module, "_WALK_LIMIT", 4)
    _tree(tmp_path, 4)
    found = {p.name for p in DirectoryIndex().walk(tmp_path)}
    assert found == {"f0", "f1", "f2", "f3"}


def test_a_tree_over_the_bound_is_refused_in_plain_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(fence_module, "_WALK_LIMIT", 4)
    _tree(tmp_path, 5)
    with pytest.raises(OSError, match=r"more than 4 entries to search for the paths the deny"):
        list(DirectoryIndex().walk(tmp_path))
