"""The demo's scratch workspace: `--demo --continue` carries on in it, and it is removed at
exit unless kept, the run saying which."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from core.agent.live import (
    PreparedSession,
    SessionOptions,
    end_workspace,
    open_session,
    prepare_session,
)
from core.agent.sessions import SessionNotFound, read_meta
from core.events import EventRecorder


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))


def demo(
    tmp_path: Path, *, keep_workspace: bool = False, continue_latest: bool = False
) -> PreparedSession:
    options = SessionOptions(
        cwd=tmp_path,
        demo=True,
        scenario="quick",
        demo_speed=0,
        keep_workspace=keep_workspace,
        continue_latest=continue_latest,
    )
    return prepare_session(options)


async def run_once(prepared: PreparedSession, prompt: str = "look around") -> None:
    live = await open_session(prepared, sink=EventRecorder(), trusted=True)
    try:
        await live.send(prompt)
    finally:
        await live.close()


async def test_a_kept_workspace_is_where_demo_continue_carries_on(tmp_path: Path):
    first = demo(tmp_path, keep_workspace=True)
    workspace = first.cwd
    assert workspace.name.startswith("proctor-demo-") and workspace.is_dir()
    assert read_meta(first.session).workspace == str(workspace)
    await run_once(first)
    said = end_workspace(first)
    assert said is not None and said.startswith(f"kept the demo workspace {workspace}")
    assert "--keep-workspace" in said and workspace.is_dir()

    again = demo(tmp_path, continue_latest=True)
    try:
        assert again.resumed and again.session.id == first.session.id
        assert again.cwd == workspace
        assert len(again.history) >= 2  # the earlier conversation goes to the model
        assert any("carries on in its kept workspace" in note for note in again.notes)
        # What was kept once stays kept: this run does not remove it either.
        said = end_workspace(again)
        assert said is not None and "carried on from before" in said and workspace.is_dir()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


async def test_a_workspace_not_kept_is_removed_and_continue_then_starts_afresh(tmp_path: Path):
    first = demo(tmp_path)
    workspace = first.cwd
    await run_once(first)
    assert end_workspace(first) == (
        f"removed the demo workspace {workspace} (--keep-workspace keeps it)"
    )
    assert not workspace.exists()

    again = demo(tmp_path, continue_latest=True)
    try:
        assert not again.resumed and again.session.id != first.session.id
        assert again.cwd != workspace and again.cwd.is_dir()
        assert again.history == []
        (gone,) = [note for note in again.notes if "is gone" in note]
        assert first.session.id in gone and str(workspace) in gone
    finally:
        end_workspace(again)
    assert not again.cwd.exists()


async def test_a_recorded_workspace_that_is_not_a_demo_copy_is_never_used(tmp_path: Path):
    first = demo(tmp_path, keep_workspace=True)
    await run_once(first)
    end_workspace(first)
    precious = tmp_path / "my-own-project"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine\n")
    meta = json.loads(first.session.meta_path.read_text())
    meta["workspace"] = str(precious)
    first.session.meta_path.write_text(json.dumps(meta))

    again = demo(tmp_path, continue_latest=True)
    try:
        assert again.cwd != precious and not again.resumed
        assert any("is gone" in note for note in again.notes)
    finally:
        end_workspace(again)
        shutil.rmtree(first.cwd, ignore_errors=True)
    assert (precious / "keep.txt").read_text() == "mine\n"


def test_demo_continue_with_no_earlier_demo_session_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import core.agent.demo

    copies: list[Path] = []
    make_copy = core.agent.demo.demo_workspace

    def recorded(*args: Any) -> Path:
        copies.append(make_copy(*args))
        return copies[-1]

    monkeypatch.setattr(core.agent.demo, "demo_workspace", recorded)
    with pytest.raises(SessionNotFound, match="no earlier demo session"):
        demo(tmp_path, continue_latest=True)
    assert copies == []  # no scratch copy is made for a session that cannot start


def test_a_scenario_in_the_current_directory_has_no_scratch_copy_to_remove(tmp_path: Path):
    scenario = tmp_path / "here.json"
    scenario.write_text(
        json.dumps(
            {"name": "here", "workspace": "cwd", "turns": [[{"type": "text", "text": "hi"}]]}
        )
    )
    prepared = prepare_session(
        SessionOptions(cwd=tmp_path, demo=True, scenario=str(scenario), demo_speed=0)
    )
    assert prepared.cwd == tmp_path.resolve() and prepared.scratch is None
    assert end_workspace(prepared) is None and tmp_path.is_dir()


async def test_proctor_sessions_demo_lists_the_demo_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    from tui.cli import main

    first = demo(tmp_path)
    await run_once(first, "look around, please")
    end_workspace(first)
    assert main(["sessions", "--demo"]) == 0
    listed = capsys.readouterr().out
    assert first.session.id in listed and "look around, please" in listed


async def test_a_demo_named_link_to_another_folder_is_never_used(tmp_path: Path):
    """A `proctor-demo-*` name in the temporary directory that is a link (anyone may make one
    there, say after the kept copy was cleaned away) is not a demo copy."""
    first = demo(tmp_path, keep_workspace=True)
    await run_once(first)
    end_workspace(first)
    workspace = first.cwd
    precious = tmp_path / "my-own-project"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine\n")
    shutil.rmtree(workspace)
    workspace.symlink_to(precious, target_is_directory=True)

    again = demo(tmp_path, continue_latest=True)
    try:
        assert again.cwd != workspace and not again.resumed
        assert any("is gone" in note for note in again.notes)
    finally:
        end_workspace(again)
        workspace.unlink()
    assert (precious / "keep.txt").read_text() == "mine\n"
