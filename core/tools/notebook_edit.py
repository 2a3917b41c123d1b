"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook, keeping it valid.

A notebook is JSON that people also diff and review, so the file is rewritten the way it was
written: the same indentation (Jupyter's one space unless the file says otherwise), key order
(sorted when the file's keys were, as Jupyter writes them), ASCII escapes if the file used
them, line endings, BOM and a final newline. Every key the edit does not concern (notebook
and cell metadata, nbformat, other cells' outputs) is kept as it was.

Cells are named the way Read shows them: by `id` (nbformat 4.5 and later), or by number,
counting from 1 as Read's `index` does. An id wins over a number when both could match, so a
cell whose id happens to be "3" stays reachable.

Replacing a code cell's source clears its outputs and execution count: outputs from other
code would be a lie that the model (and the user) would read as the new code's results. New
cells get an id when the notebook's format has them (minor version 5 or later, or any cell
already has one), and code cells start with no outputs and a null execution count.

Like Edit, the file must have been read (and not changed since); the edit is planned before
the permission prompt, so the user is never asked about an edit that cannot apply, planned
again after it against the file as it then is, and written atomically.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import re
import stat
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..access.paths import absolute
from ..access.targets import PathTarget
from ..file_state import ReadFileState
from ..ports import ChangePreview
from ..results import format_size
from ..tool import (
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolResult,
    ValidationResult,
    failure,
)
from .files import (
    freshness_problem,
    line_ending_of,
    not_regular_text,
    os_error_text,
    preview_diff,
    record_current,
    relative_path_problem,
    shown_path,
    to_line_ending,
    write_atomically,
)
from .read_notebook import MAX_NOTEBOOK_BYTES

EditMode = Literal["replace", "insert", "delete"]
CellType = Literal["code", "markdown"]

_LINES = re.compile(r"[^\n]*\n|[^\n]+")
_INDENT = re.compile(r"\n([ \t]+)\S")


class NotebookEditInput(ToolInput):
    notebook_path: str = Field(description="The absolute path of the .ipynb file to change.")
    cell_id: str | int | None = Field(
        default=None,
        description=(
            "The cell to change: its id, or its number counting from 1 (as Read shows cells). "
            "For insert, the new cell goes after this one; without it, at the top."
        ),
    )
    new_source: str | None = Field(
        default=None,
        description="The cell's new source (for replace and insert; not used by delete).",
    )
    cell_type: CellType | None = Field(
        default=None,
        description=(
            "code or markdown. Required for insert; for replace, changes the cell's type "
            "(default: keep it)."
        ),
    )
    edit_mode: EditMode = Field(
        default="replace",
        description="replace (the default) the cell's source, insert a new cell, or delete it.",
    )


_PROMPT = """Changes one cell of a Jupyter notebook (.ipynb): replaces its source, inserts a \
new cell, or deletes one.

Usage:
- notebook_path must be absolute. Read the notebook with the Read tool first: an edit of a \
notebook you have not read, or that changed on disk since, is refused.
- cell_id names the cell: its id, or its number counting from 1, both as Read shows them \
(`<cell index="3" id="...">`).
- edit_mode "replace" (the default) sets the cell's source to new_source; give cell_type to \
change a code cell to markdown or back. Replacing a code cell's source clears its outputs.
- edit_mode "insert" adds a new cell after cell_id (or at the top without cell_id); \
cell_type is required.
- edit_mode "delete" removes the cell named by cell_id.
- Cell numbers shift after an insert or delete: Read the notebook again, or use ids.
- The rest of the notebook (metadata, other cells and their outputs, formatting) is kept. \
Use Edit or Write only for other files."""


@dataclass(frozen=True, slots=True)
class NotebookChange:
    """A NotebookEdit that happened: `ToolResult.data`."""

    path: Path
    edit_mode: EditMode
    cell_number: int
    """Where the cell is (or, for delete, was), counting from 1."""
    cell_id: str | None
    cell_type: str
    old_source: str
    new_source: str
    total_cells: int
    """Cells in the notebook after the edit."""
    outputs_cleared: bool = False


@dataclass(frozen=True, slots=True)
class NotebookPlan:
    data: bytes
    change: NotebookChange


class NotebookEdit(Tool[NotebookEditInput, NotebookChange]):
    name = "NotebookEdit"
    headline_field = "notebook_path"
    search_hint = "edit jupyter notebook ipynb cell insert delete"
    input_model = NotebookEditInput
    description = "Replaces, inserts or deletes a cell of a Jupyter notebook."

    instructions = _PROMPT

    def rule_target(self, input: NotebookEditInput, cwd: Path) -> PathTarget:
        return PathTarget(absolute(input.notebook_path, cwd), "edit")

    async def validate_input(
        self, input: NotebookEditInput, context: ToolContext
    ) -> ValidationResult:
        problem = _input_problem(input, context.cwd)
        if problem is None:
            planned = await asyncio.to_thread(plan_notebook_edit, input, context.read_file_state)
            problem = planned if isinstance(planned, str) else None
        return ValidationResult.failed(problem) if problem else ValidationResult.passed()

    async def call(
        self, input: NotebookEditInput, context: ToolContext, progress: Progress
    ) -> ToolResult[NotebookChange]:
        problem = _input_problem(input, context.cwd)
        if problem:
            return failure(problem)
        change = await asyncio.to_thread(edit_notebook, input, context.read_file_state)
        return failure(change) if isinstance(change, str) else ToolResult(data=change)

    def render(self, output: NotebookChange) -> ToolContent:
        return _summary(output)

    def change_preview(self, input: NotebookEditInput, cwd: Path) -> ChangePreview | None:
        """The cell as it is and as it would be, as a diff; a cell that cannot be read
        shows as empty (the call itself reports why it cannot edit it)."""
        name = shown_path(input.notebook_path, cwd)
        cell = input.cell_id
        note = f"{input.edit_mode} cell {cell}" if cell is not None else input.edit_mode
        before = (
            "" if input.edit_mode == "insert" else _cell_source(cwd / input.notebook_path, cell)
        )
        after = "" if input.edit_mode == "delete" else input.new_source or ""
        return ChangePreview(note, preview_diff(before, after, name), name)


def _input_problem(input: NotebookEditInput, cwd: Path) -> str | None:
    problem = relative_path_problem(input.notebook_path, cwd)
    if problem:
        return problem.replace("file_path", "notebook_path")
    if not input.notebook_path.lower().endswith(".ipynb"):
        return (
            f"{input.notebook_path} is not a Jupyter notebook (.ipynb). NotebookEdit only "
            "changes notebooks; use Edit for other files."
        )
    mode = input.edit_mode
    if mode in ("replace", "delete") and input.cell_id is None:
        return f"cell_id is required to {mode} a cell: give its id or its number (from 1)."
    if mode in ("replace", "insert") and input.new_source is None:
        return f"new_source is required to {mode} a cell: give the cell's source."
    if mode == "insert" and input.cell_type is None:
        return "cell_type is required to insert a cell: give 'code' or 'markdown'."
    return None


def edit_notebook(input: NotebookEditInput, state: ReadFileState) -> NotebookChange | str:
    """Plan the edit against the notebook as it is now, write it, record it (blocking)."""
    planned = plan_notebook_edit(input, state)
    if isinstance(planned, str):
        return planned
    path = Path(os.path.normpath(input.notebook_path))
    try:
        write_atomically(path, planned.data)
    except OSError as error:
        return os_error_text(path, error, "written")
    record_current(path, state)
    return planned.change


def plan_notebook_edit(input: NotebookEditInput, state: ReadFileState) -> NotebookPlan | str:
    """The edited notebook's bytes and what changed, or why it cannot be done (blocking)."""
    path = Path(os.path.normpath(input.notebook_path))
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return (
            f"Notebook does not exist: {path}. NotebookEdit changes existing notebooks; to "
            "create one, write its JSON with the Write tool."
        )
    except OSError as error:
        return os_error_text(path, error, "checked")
    except ValueError as error:  # an embedded NUL, say
        return f"{input.notebook_path!r} is not a usable path: {error}."
    if not stat.S_ISREG(info.st_mode):
        return not_regular_text(path, info.st_mode)
    problem = freshness_problem(path, state, "edit")
    if problem:
        return problem
    if info.st_size > MAX_NOTEBOOK_BYTES:
        return (
            f"{path} is {format_size(info.st_size)}, more than NotebookEdit changes "
            f"({format_size(MAX_NOTEBOOK_BYTES)}). Clear its outputs in Jupyter first, or "
            "change it with a script through the Bash tool."
        )
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        return os_error_text(path, error, "read")
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    try:
        text = data[len(bom) :].decode("utf-8")
    except UnicodeDecodeError:
        return f"{path} is not UTF-8 text, so it is not a Jupyter notebook (they are JSON)."
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as error:
        return (
            f"{path} is not valid JSON ({error.msg} at line {error.lineno}, column "
            f"{error.colno}), so it cannot be edited as a notebook. Repair the JSON with "
            "the Edit tool first."
        )
    problem = _notebook_problem(notebook, path)
    if problem:
        return problem
    style = _style(notebook, text)  # judged before the edit adds keys out of order
    planned = _apply(notebook, input, path)
    if isinstance(planned, str):
        return planned
    out = json.dumps(notebook, **style) + "\n"
    out = to_line_ending(out, line_ending_of(text)) if "\r\n" in text else out
    return NotebookPlan(bom + out.encode("utf-8"), planned)


def _notebook_problem(notebook: Any, path: Path) -> str | None:
    """Why this JSON is not a notebook NotebookEdit can keep valid, or None."""
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return f"{path} is JSON but not a Jupyter notebook: it has no list of cells."
    version = notebook.get("nbformat")
    if version != 4:
        return (
            f"{path} is in notebook format {version!r}; NotebookEdit changes format 4 only. "
            "Convert it with `jupyter nbconvert --to notebook --nbformat 4`, then try again."
        )
    for number, cell in enumerate(notebook["cells"], start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            return f"{path} is not a valid notebook: cell {number} has no cell_type."
        source = cell.get("source", "")
        if not isinstance(source, str) and not (
            isinstance(source, list) and all(isinstance(part, str) for part in source)
        ):
            return f"{path} is not a valid notebook: the source of cell {number} is not text."
    return None


def _apply(notebook: dict[str, Any], input: NotebookEditInput, path: Path) -> NotebookChange | str:
    """Make the edit in `notebook` (in place) and say what it did, or why it cannot."""
    cells: list[dict[str, Any]] = notebook["cells"]
    index: int | None = None
    if input.cell_id is not None:
        found = _find_cell(cells, input.cell_id)
        if isinstance(found, str):
            return f"{found} in {path}. {_available(cells)}"
        index = found
    as_list = _sources_are_lists(cells, index)
    if input.edit_mode == "delete":
        assert index is not None
        cell = cells.pop(index)
        return NotebookChange(
            path, "delete", index + 1, _id(cell), cell["cell_type"], _text(cell), "", len(cells)
        )
    new_source = input.new_source or ""
    if input.edit_mode == "insert":
        assert input.cell_type is not None
        position = 0 if index is None else index + 1
        cell = _new_cell(input.cell_type, new_source, as_list, notebook, cells)
        cells.insert(position, cell)
        return NotebookChange(
            path, "insert", position + 1, _id(cell), input.cell_type, "", new_source, len(cells)
        )
    assert index is not None
    cell = cells[index]
    old_type, old_source = cell["cell_type"], _text(cell)
    new_type = input.cell_type or old_type
    if new_type == old_type and new_source == old_source:
        return (
            f"new_source is the same as the source of cell {index + 1} of {path}, so the edit "
            "would change nothing."
        )
    had_outputs = bool(cell.get("outputs")) or cell.get("execution_count") is not None
    cell["cell_type"] = new_type
    cell["source"] = _source_value(new_source, as_list)
    if new_type == "code":
        # Outputs belong to the code that made them; after a change they would mislead.
        cell["execution_count"] = None
        cell["outputs"] = []
        cell.pop("attachments", None)  # only markdown and raw cells may have attachments
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    cleared = old_type == "code" and had_outputs
    return NotebookChange(
        path, "replace", index + 1, _id(cell), new_type, old_source, new_source, len(cells), cleared
    )


def _cell_source(path: Path, cell_id: str | int | None) -> str:
    """The source of one cell of the notebook at `path`; "" when it cannot be read."""
    if cell_id is None:
        return ""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells")
        index = _find_cell(cells, cell_id)
        return _text(cells[index]) if isinstance(index, int) else ""
    except (OSError, ValueError, AttributeError, TypeError, IndexError):
        return ""


def _find_cell(cells: list[dict[str, Any]], cell_id: str | int) -> int | str:
    """The index of the cell named by `cell_id`, or what is wrong with the name."""
    if isinstance(cell_id, str):
        for index, cell in enumerate(cells):
            if cell.get("id") == cell_id:
                return index
        if not cell_id.strip().isdigit():
            return f"No cell has the id {cell_id!r}"
    number = int(cell_id)
    if number < 1:
        return f"There is no cell {number}: cells are numbered from 1, as Read shows them,"
    if number > len(cells):
        return f"There is no cell {number} (the notebook has {len(cells)} cells)"
    return number - 1


def _available(cells: list[dict[str, Any]]) -> str:
    if not cells:
        return "The notebook has no cells: insert one (edit_mode insert, without cell_id)."
    ids = [cell_id for cell in cells if (cell_id := _id(cell))]
    shown = ", ".join(repr(cell_id) for cell_id in ids[:20]) + (", ..." if len(ids) > 20 else "")
    numbers = f"Cells are numbered 1 to {len(cells)}"
    return f"{numbers}; their ids are {shown}." if ids else f"{numbers} (they have no ids)."


def _id(cell: dict[str, Any]) -> str | None:
    cell_id = cell.get("id")
    return cell_id if isinstance(cell_id, str) else None


def _text(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _sources_are_lists(cells: list[dict[str, Any]], index: int | None) -> bool:
    """Whether to store a source as a list of lines (Jupyter's way) or one string: as the
    cell being replaced does, else as the notebook's first cell does, else as Jupyter."""
    sample = cells[index] if index is not None else cells[0] if cells else None
    return True if sample is None else isinstance(sample.get("source"), list)


def _source_value(text: str, as_list: bool) -> str | list[str]:
    return _LINES.findall(text) if as_list else text


def _new_cell(
    cell_type: CellType,
    source: str,
    as_list: bool,
    notebook: dict[str, Any],
    cells: list[dict[str, Any]],
) -> dict[str, Any]:
    # Keys in Jupyter's (sorted) order, so a sorted notebook stays sorted.
    cell: dict[str, Any] = {"cell_type": cell_type}
    if cell_type == "code":
        cell["execution_count"] = None
    minor = notebook.get("nbformat_minor")
    if (isinstance(minor, int) and minor >= 5) or any(_id(c) for c in cells):
        taken = {_id(c) for c in cells}
        new_id = uuid.uuid4().hex[:8]
        while new_id in taken:
            new_id = uuid.uuid4().hex[:8]
        cell["id"] = new_id
    cell["metadata"] = {}
    if cell_type == "code":
        cell["outputs"] = []
    cell["source"] = _source_value(source, as_list)
    return cell


def _style(notebook: dict[str, Any], original: str) -> dict[str, Any]:
    """`json.dumps` arguments that write the notebook as the original was written."""
    match = _INDENT.search(original)
    indent: str | int = 1
    if match:
        whitespace = match.group(1)
        indent = whitespace if "\t" in whitespace else len(whitespace)
    return {
        "indent": indent,
        "ensure_ascii": original.isascii() and "\\u" in original,
        "sort_keys": _is_sorted(notebook),
    }


def _is_sorted(notebook: dict[str, Any]) -> bool:
    """Whether the file's keys were sorted (as Jupyter writes them), judged by the top level
    and the cells; new and changed keys are then put in order too."""
    objects: list[dict[str, Any]] = [notebook, *notebook["cells"]]
    return all(list(obj) == sorted(obj) for obj in objects if len(obj) > 1)


def _summary(change: NotebookChange) -> str:
    named = f"cell {change.cell_number}" + (f" (id {change.cell_id})" if change.cell_id else "")
    if change.edit_mode == "delete":
        return (
            f"Deleted {named}, a {change.cell_type} cell, from {change.path}. The notebook now "
            f"has {change.total_cells} cells; the cells after it moved up by one."
        )
    if change.edit_mode == "insert":
        return (
            f"Inserted a new {change.cell_type} cell as {named} of {change.path}. The notebook "
            f"now has {change.total_cells} cells; the cells after it moved down by one."
        )
    text = f"Updated {named} of {change.path}; it is now a {change.cell_type} cell."
    if change.outputs_cleared:
        text += " Its outputs and execution count were cleared, as they came from the old code."
    return text
