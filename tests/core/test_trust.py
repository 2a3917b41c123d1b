"""The trusted-projects store: persisted, resolved, fail closed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.trust import is_trusted, store_path, trust


@pytest.fixture(autouse=True)
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "config"
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(directory))
    return directory


def test_nothing_is_trusted_at_first(tmp_path: Path) -> None:
    assert not is_trusted(tmp_path)


def test_trust_is_remembered_by_resolved_path(tmp_path: Path, config: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    link = tmp_path / "link"
    link.symlink_to(project)
    trust(link)
    trust(project)
    assert is_trusted(project)
    assert is_trusted(tmp_path / "project" / ".." / "project")
    assert not is_trusted(project / "sub")
    assert not is_trusted(tmp_path)
    stored = json.loads((config / "trusted-projects.json").read_text())
    assert stored == {"trusted": [str(project.resolve())]}
    assert sorted(p.name for p in config.iterdir()) == ["trusted-projects.json"]


@pytest.mark.parametrize("text", ["{not json", "[]", '{"trusted": "all"}', ""])
def test_a_malformed_store_trusts_nothing(tmp_path: Path, config: Path, text: str) -> None:
    config.mkdir()
    store_path().write_text(text)
    assert not is_trusted(tmp_path)


def test_trusting_with_a_malformed_store_keeps_the_old_file(tmp_path: Path, config: Path) -> None:
    config.mkdir()
    store_path().write_text("{not json")
    trust(tmp_path)
    assert is_trusted(tmp_path)
    assert (config / "trusted-projects.json.bad").read_text() == "{not json"
