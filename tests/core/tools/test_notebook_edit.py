"""NotebookEdit: cells replaced, inserted and deleted, the file kept valid and as it was written."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import ScriptedPort, make_context

from core.access.targets import PathTarget
from core.executor import ExecutorServices, ToolCall, ToolCallOutcome, run_tool_use
from core.tool import ToolContext
from core.tools import notebook_edit
from core.tools.notebook_edit import NotebookChange, NotebookEdit, NotebookEditInput
from core.tools.read import Read


def context(tmp_path: Path) -> ToolContext:
    return make_context([Read(), NotebookEdit()], cwd=tmp_path)


async def run(ctx: ToolContext, name: str, **input: Any) -> ToolCallOutcome:
    services = ExecutorServices(permission_port=ScriptedPort())
    return await run_tool_use(ToolCall("toolu_1", name, input), services, ctx)


def text(outcome: ToolCallOutcome) -> str:
    content = outcome.block["content"]
    assert isinstance(content, str)
    return content


def jupyter_notebook(minor: int = 5) -> dict[str, Any]:
    def ids(cell_id: str) -> dict[str, str]:
        return {"id": cell_id} if minor >= 5 else {}

    return {
        "cells": [
            {
                "cell_type": "markdown",
                **ids("intro"),
                "metadata": {},
                "source": ["# Title\n", "Text"],
            },
            {
                "cell_type": "code",
                "execution_count": 3,
                **ids("load"),
                "metadata": {"tags": ["setup"]},
                "outputs": [{"name": "stdout", "output_type": "stream", "text": ["loaded\n"]}],
                "source": ["import pandas as pd\n", "df = pd.read_csv('x.csv')"],
            },
            {
                "cell_type": "code",
                "execution_count": 4,
                **ids("plot"),
                "metadata": {},
                "outputs": [],
                "source": ["df.plot()"],
            },
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}, "title": "Café"},
        "nbformat": 4,
        "nbformat_minor": minor,
    }


def write_notebook(path: Path, notebook: dict[str, Any], **dump: Any) -> Path:
    options: dict[str, Any] = {"indent": 1, "sort_keys": True, "ensure_ascii": False}
    options.update(dump)
    path.write_text(json.dumps(notebook, **options) + "\n", encoding="utf-8")
    return path


async def read_notebook(ctx: ToolContext, path: Path) -> None:
    outcome = await run(ctx, "Read", file_path=str(path))
    assert not outcome.is_error, text(outcome)


async def edit(ctx: ToolContext, path: Path, **input: Any) -> ToolCallOutcome:
    return await run(ctx, "NotebookEdit", notebook_path=str(path), **input)


def cells(path: Path) -> list[dict[str, Any]]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded["cells"]


@pytest.fixture
def ready(tmp_path: Path) -> tuple[ToolContext, Path]:
    return context(tmp_path), write_notebook(tmp_path / "analysis.ipynb", jupyter_notebook())


# -- replace --------------------------------------------------------------------------------


async def test_replace_by_id_clears_outputs_and_keeps_everything_else(
    ready: tuple[ToolContext, Path],
) -> None:
    ctx, path = ready
    await read_notebook(ctx, path)
    before = json.loads(path.read_text())
    outcome = await edit(ctx, path, cell_id="load", new_source="import polars as pl\ndf = 1")
    assert not outcome.is_error, text(outcome)
    after = json.loads(path.read_text())
    cell = after["cells"][1]
    assert cell["source"] == ["import polars as pl\n", "df = 1"]
    assert cell["outputs"] == [] and cell["execution_count"] is None
    assert cell["metadata"] == {"tags": ["setup"]} and cell["id"] == "load"
    assert after["cells"][0] == before["cells"][0] and after["cells"][2] == before["cells"][2]
    assert after["metadata"] == before["metadata"] and after["nbformat_minor"] == 5
    # Written as Jupyter writes: one-space indent, sorted keys, raw UTF-8, final newline.
    expected = json.dumps(after, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    assert path.read_text(encoding="utf-8") == expected and "Café" in expected
    change = outcome.data
    assert isinstance(change, NotebookChange)
    assert (change.edit_mode, change.cell_number, change.cell_id) == ("replace", 2, "load")
    assert change.outputs_cleared and change.old_source.startswith("import pandas")
    assert "Updated cell 2 (id load)" in text(outcome) and "outputs" in text(outcome)


@pytest.mark.parametrize("cell_id", ["3", 3])
async def test_replace_by_number_counts_from_one_like_read(
    ready: tuple[ToolContext, Path], cell_id: str | int
) -> None:
    ctx, path = ready
    await read_notebook(ctx, path)
    outcome = await edit(ctx, path, cell_id=cell_id, new_source="df.describe()")
    assert not outcome.is_error, text(outcome)
    assert cells(path)[2]["source"] == ["df.describe()"]
    assert cells(path)[2]["id"] == "plot"


async def test_an_id_wins_over_a_number(tmp_path: Path) -> None:
    notebook = jupyter_notebook()
    notebook["cells"][2]["id"] = "1"
    ctx, path = context(tmp_path), write_notebook(tmp_path / "n.ipynb", notebook)
    await read_notebook(ctx, path)
    assert not (await edit(ctx, path, cell_id="1", new_source="x")).is_error
    assert cells(path)[2]["source"] == ["x"] and cells(path)[0]["source"][0] == "# Title\n"


async def test_replace_can_change_the_cell_type(ready: tuple[ToolContext, Path]) -> None:
    ctx, path = ready
    await read_notebook(ctx, path)
    outcome = await edit(ctx, path, cell_id="load", new_source="Now *prose*", cell_type="markdown")
    assert not outcome.is_error, text(outcome)
    cell = cells(path)[1]
    assert cell == {
        "cell_type": "markdown",
        "id": "load",
        "metadata": {"tags": ["setup"]},
        "source": ["Now *prose*"],
    }
    outcome = await edit(ctx, path, cell_id="intro", new_source="print(1)", cell_type="code")
    assert not outcome.is_error, text(outcome)
    cell = cells(path)[0]
    assert cell["cell_type"] == "code" and cell["outputs"] == []
    assert cell["execution_count"] is None
    assert list(cell) == sorted(cell)  # the sorted file stays sorted


async def test_replacing_a_markdown_cell_adds_no_outputs(ready: tuple[ToolContext, Path]) -> None:
    ctx, path = ready
    await read_notebook(ctx, path)
    outcome = await edit(ctx, path, cell_id="intro", new_source="# New title\n\nBody\n")
    assert not outcome.is_error
    assert cells(path)[0] == {
        "cell_type": "markdown",
        "id": "intro",
        "metadata": {},
        "source": ["# New title\n", "\n", "Body\n"],
    }
    assert isinstance(outcome.data, NotebookChange) and not outcome.data.outputs_cleared


# -- insert ---------------------------------------------------------------------------------


async def test_insert_after_a_cell_gives_a_new_code_cell_an_id(
    ready: tuple[ToolContext, Path],
) -> None:
    ctx, path = ready
    await read_notebook(ctx, path)
    outcome = await edit(
        ctx, path, edit_mode="insert", cell_id="load", cell_type="code", new_source="df.head()"
    )
    assert not outcome.is_error, text(outcome)
    now = cells(path)
    assert [c.get("id") for c in now][:2] == ["intro", "load"] and now[3]["id"] == "plot"
    new = now[2]
    assert re.fullmatch(r"[0-9a-f]{8}", new["id"])
    assert new == {
        "cell_type": "code",
        "execution_count": None,
        "id": new["id"],
        "metadata": {},
        "outputs": [],
        "source": ["df.head()"],
    }
    assert f"as cell 3 (id {new['id']})" in text(outcome) and "now has 4 cells" in text(outcome)


async def test_insert_without_a_cell_goes_to_the_top(ready: tuple[ToolContext, Path]) -> None:
    ctx, path = ready
    await read_notebook(ctx, path)
    outcome = await edit(ctx, path, edit_mode="insert", cell_type="markdown", new_source="Top")
    assert not outcome.is_error, text(outcome)
    top = cells(path)[0]
    assert top["cell_type"] == "markdown" and top["source"] == ["Top"]
    assert "outputs" not in top and "execution_count" not in top


async def test_old_notebooks_get_no_cell_ids(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    path = write_notebook(tmp_path / "old.ipynb", jupyter_notebook(minor=4))
    await read_notebook(ctx, path)
    outcome = await edit(
        ctx, path, edit_mode="insert", cell_id=1, cell_type="code", new_source="x = 1"
    )
    assert not outcome.is_error, text(outcome)
    assert all("id" not in cell for cell in cells(path))
    assert cells(path)[1]["source"] == ["x = 1"]


# -- delete ---------------------------------------------------------------------------------


async def test_delete_by_id_and_by_number(ready: tuple[ToolContext, Path]) -> None:
    ctx, path = ready
    await read_notebook(ctx, path)
    outcome = await edit(ctx, path, edit_mode="delete", cell_id="load")
    assert not outcome.is_error, text(outcome)
    assert [c["id"] for c in cells(path)] == ["intro", "plot"]
    assert "Deleted cell 2 (id load)" in text(outcome) and "now has 2 cells" in text(outcome)
    # A delete needs no new_source, and the file need not be read again after our own edit.
    outcome = await edit(ctx, path, edit_mode="delete", cell_id="2")
    assert not outcome.is_error, text(outcome)
    assert [c["id"] for c in cells(path)] == ["intro"]


# -- keeping the file as it was written -----------------------------------------------------


async def test_formatting_is_kept(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    notebook = jupyter_notebook()
    # Two-space indent, keys in insertion order, ASCII escapes, CRLF, string sources.
    for cell in notebook["cells"]:
        cell["source"] = "".join(cell["source"])
    raw = json.dumps(notebook, indent=2, ensure_ascii=True).replace("\n", "\r\n") + "\r\n"
    path = tmp_path / "styled.ipynb"
    path.write_bytes(raw.encode())
    await read_notebook(ctx, path)
    outcome = await edit(ctx, path, cell_id="plot", new_source="plot(é)")
    assert not outcome.is_error, text(outcome)
    notebook["cells"][2].update(source="plot(é)", execution_count=None)
    expected = json.dumps(notebook, indent=2, ensure_ascii=True).replace("\n", "\r\n") + "\r\n"
    assert path.read_bytes() == expected.encode()


async def test_a_bom_is_kept(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    path = tmp_path / "bom.ipynb"
    body = json.dumps(jupyter_notebook(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    await read_notebook(ctx, path)
    assert not (await edit(ctx, path, cell_id="plot", new_source="y")).is_error
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and json.loads(data[3:])["cells"][2]["source"] == ["y"]


async def test_the_mode_is_kept(ready: tuple[ToolContext, Path]) -> None:
    ctx, path = ready
    os.chmod(path, 0o640)
    await read_notebook(ctx, path)
    assert not (await edit(ctx, path, cell_id="plot", new_source="y")).is_error
    assert os.stat(path).st_mode & 0o777 == 0o640


# -- refusals -------------------------------------------------------------------------------


async def test_the_notebook_must_be_read_first_and_unchanged(
    ready: tuple[ToolContext, Path],
) -> None:
    ctx, path = ready
    original = path.read_bytes()
    outcome = await edit(ctx, path, cell_id="plot", new_source="y")
    assert outcome.is_error and "has not been read yet" in text(outcome)
    await read_notebook(ctx, path)
    info = os.stat(path)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    outcome = await edit(ctx, path, cell_id="plot", new_source="y")
    assert outcome.is_error and "changed on disk since you read it" in text(outcome)
    assert path.read_bytes() == original


@pytest.mark.parametrize(
    ("input", "expected"),
    [
        ({"cell_id": "nope", "new_source": "x"}, "No cell has the id 'nope'"),
        ({"cell_id": "9", "new_source": "x"}, "There is no cell 9 (the notebook has 3 cells)"),
        ({"cell_id": 0, "new_source": "x"}, "cells are numbered from 1"),
        ({"new_source": "x"}, "cell_id is required to replace"),
        ({"cell_id": "plot"}, "new_source is required to replace"),
        ({"edit_mode": "delete"}, "cell_id is required to delete"),
        ({"edit_mode": "insert", "new_source": "x"}, "cell_type is required to insert"),
        ({"cell_id": "plot", "new_source": "df.plot()"}, "would change nothing"),
        ({"cell_id": "plot", "new_source": 5}, "new_source"),
        ({"cell_id": "plot", "new_source": "x", "edit_mode": "move"}, "edit_mode"),
        ({"cell_id": "plot", "new_source": "x", "cell_type": "raw"}, "cell_type"),
        ({"cell_id": "plot", "new_source": "x", "extra": 1}, "extra"),
    ],
)
async def test_bad_input_is_an_error_that_says_what_to_do(
    ready: tuple[ToolContext, Path], input: dict[str, Any], expected: str
) -> None:
    ctx, path = ready
    await read_notebook(ctx, path)
    original = path.read_bytes()
    outcome = await edit(ctx, path, **input)
    assert outcome.is_error and expected in text(outcome), text(outcome)
    assert path.read_bytes() == original


async def test_a_missing_cell_lists_what_there_is(ready: tuple[ToolContext, Path]) -> None:
    ctx, path = ready
    await read_notebook(ctx, path)
    outcome = await edit(ctx, path, cell_id="nope", new_source="x")
    assert "Cells are numbered 1 to 3; their ids are 'intro', 'load', 'plot'." in text(outcome)


async def test_paths_that_are_not_editable_notebooks(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    cases = {
        "relative.ipynb": "must be an absolute path",
        str(tmp_path / "notes.txt"): "is not a Jupyter notebook (.ipynb)",
        str(tmp_path / "missing.ipynb"): "Notebook does not exist",
        str(tmp_path): "is not a Jupyter notebook (.ipynb)",
    }
    for notebook_path, expected in cases.items():
        outcome = await run(
            ctx, "NotebookEdit", notebook_path=notebook_path, cell_id="1", new_source="x"
        )
        assert outcome.is_error and expected in text(outcome), (notebook_path, text(outcome))
    folder = tmp_path / "dir.ipynb"
    folder.mkdir()
    outcome = await edit(ctx, folder, cell_id="1", new_source="x")
    assert outcome.is_error and "is a directory" in text(outcome)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"cells": [', "is not valid JSON (Expecting value at line 1"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\xff", "is not UTF-8 text"),
        (b'{"metadata": {}}', "it has no list of cells"),
        (b'{"cells": [], "nbformat": 3}', "notebook format 3"),
        (b'{"cells": [{"source": "x"}], "nbformat": 4}', "cell 1 has no cell_type"),
        (b'{"cells": [{"cell_type": "code", "source": 1}], "nbformat": 4}', "is not text"),
    ],
)
async def test_files_that_are_not_valid_notebooks_are_refused(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    ctx = context(tmp_path)
    path = tmp_path / "broken.ipynb"
    path.write_bytes(content)
    # Read may refuse these too; the edit must be refused whether or not it was read.
    ctx.read_file_state.record(path.resolve(), os.stat(path).st_mtime_ns)
    outcome = await edit(ctx, path, cell_id="1", new_source="x")
    assert outcome.is_error and expected in text(outcome), text(outcome)
    assert path.read_bytes() == content


async def test_a_notebook_over_the_size_limit_is_refused(
    ready: tuple[ToolContext, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx, path = ready
    await read_notebook(ctx, path)
    monkeypatch.setattr(notebook_edit, "MAX_NOTEBOOK_BYTES", 100)
    outcome = await edit(ctx, path, cell_id="plot", new_source="y")
    assert outcome.is_error and "more than NotebookEdit changes" in text(outcome)


async def test_call_never_raises_on_bad_input(tmp_path: Path) -> None:
    # Straight to call, without validation: the same checks answer with an error result.
    tool = NotebookEdit()
    ctx = context(tmp_path)
    for input in (
        NotebookEditInput(notebook_path="x.ipynb", cell_id="1", new_source="x"),
        NotebookEditInput(notebook_path=str(tmp_path / "none.ipynb"), cell_id="1", new_source="x"),
        NotebookEditInput(notebook_path=str(tmp_path / "a.ipynb"), edit_mode="insert"),
    ):
        result = await tool.call(input, ctx, lambda _p: None)
        assert result.is_error and isinstance(result.data, str)


def test_the_tool_describes_itself(tmp_path: Path) -> None:
    tool = NotebookEdit()
    input = NotebookEditInput(notebook_path="nb.ipynb", cell_id="1", new_source="x")
    assert tool.rule_target(input, tmp_path) == PathTarget(tmp_path / "nb.ipynb", "edit")
    assert not tool.is_read_only(input) and not tool.is_concurrency_safe(input)
    assert tool.input_json_schema()["required"] == ["notebook_path"]
    assert "Claude" not in tool.prompt(make_context([]).options)


async def test_the_permission_dialog_gets_the_cell_it_would_change_as_a_diff(tmp_path: Path):
    (tmp_path / "a.ipynb").write_text(json.dumps(jupyter_notebook()))
    ctx = context(tmp_path)
    port = ScriptedPort()
    services = ExecutorServices(permission_port=port)
    source = "import polars as pl"
    path = str(tmp_path / "a.ipynb")
    call = {"notebook_path": path, "cell_id": "load", "new_source": source}
    await run_tool_use(ToolCall("toolu_1", "Read", {"file_path": path}), services, ctx)
    edited = await run_tool_use(ToolCall("toolu_2", "NotebookEdit", call), services, ctx)
    assert port.requests, text(edited)
    preview = port.requests[-1].preview
    assert preview is not None and preview.path == "a.ipynb"
    assert preview.note == "replace cell load"
    assert "-import pandas as pd" in preview.lines and f"+{source}" in preview.lines
    tool, cwd = NotebookEdit(), tmp_path
    inserted = tool.change_preview(
        NotebookEditInput(
            notebook_path=path, edit_mode="insert", cell_type="code", new_source="x = 1"
        ),
        cwd,
    )
    assert inserted is not None and [
        line for line in inserted.lines if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ] == ["+x = 1"]
    broken = tool.change_preview(
        NotebookEditInput(notebook_path=str(tmp_path / "gone.ipynb"), cell_id=1, new_source="y"),
        cwd,
    )
    assert broken is not None and "+y" in broken.lines
