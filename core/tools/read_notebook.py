"""Read's Jupyter notebooks: the cells, each with its source and outputs, as the model sees them.

Each cell is a `<cell>` tag (index, id, type, language) holding its source and, for code, its
outputs, so the model sees what ran and what it printed. `offset` and `limit` count cells.
Each output is cut at MAX_CELL_OUTPUT_CHARS, terminal colour codes are stripped from
tracebacks, and image outputs go back as image blocks (at most MAX_NOTEBOOK_IMAGES, none
larger than an image Read would show); the content is one string unless there are images. A
file that is not the JSON Jupyter writes is refused whole, with a way to see its raw text.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from .read_media import MAX_IMAGE_BYTES
from .read_result import MAX_OUTPUT_CHARS, FileRead

MAX_NOTEBOOK_BYTES = 32 * 1024 * 1024
"""The largest notebook Read reads and NotebookEdit edits."""
MAX_NOTEBOOK_IMAGES = 10
MAX_CELL_OUTPUT_CHARS = 10_000

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_IMAGE_OUTPUT_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_TEXT_OUTPUT_TYPES = ("text/plain", "text/markdown", "application/json", "text/html")

Item = str | dict[str, Any]
"""A piece of notebook output: text, or an image block."""


class _BadNotebook(Exception):
    pass


def read_notebook(
    path: Path, data: bytes, mtime_ns: int, offset: int | None, limit: int | None
) -> FileRead | str:
    quoted = shlex.quote(str(path))
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
        if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
            raise _BadNotebook("it has no list of cells")
        cells: list[Any] = notebook["cells"]
        total = len(cells)
        start = max(offset or 1, 1)
        end = min(total, start - 1 + (limit or total))
        language = _language(notebook)
        images = [0]
        rendered: list[list[Item]] = []
        size = 0
        for index in range(start, end + 1):
            items = _cell(index, cells[index - 1], language, images)
            cell_size = sum(len(item) for item in items if isinstance(item, str))
            if rendered and size + cell_size > MAX_OUTPUT_CHARS:
                break
            rendered.append(items)
            size += cell_size
    except (UnicodeDecodeError, json.JSONDecodeError, _BadNotebook) as error:
        return (
            f"{path} is not a valid Jupyter notebook ({error}). To see its raw text, run "
            f"`cat {quoted}` with the Bash tool."
        )
    if total == 0:
        return FileRead(
            path, "notebook", f"(The notebook {path} has no cells.)", mtime_ns, len(data)
        )
    if start > total:
        notice = f"(The notebook {path} has {total} cells, so there is no cell {start}.)"
        return FileRead(path, "notebook", notice, mtime_ns, len(data), start, 0, total)
    last = start - 1 + len(rendered)
    flat = [item for items in rendered for item in items]
    if last < total:
        flat.append(
            f"\n(Showing cells {start}-{last} of {total}. To read more, call Read with "
            f"offset={last + 1}: for a notebook, offset and limit count cells.)"
        )
    content = _blocks(flat)
    return FileRead(path, "notebook", content, mtime_ns, len(data), start, last - start + 1, total)


def _language(notebook: dict[str, Any]) -> str:
    metadata = notebook.get("metadata")
    if isinstance(metadata, dict):
        for key in ("kernelspec", "language_info"):
            section = metadata.get(key)
            name = (
                section.get("language" if key == "kernelspec" else "name")
                if isinstance(section, dict)
                else None
            )
            if isinstance(name, str) and name:
                return name
    return "python"


def _cell(index: int, cell: Any, language: str, images: list[int]) -> list[Item]:
    if not isinstance(cell, dict):
        raise _BadNotebook(f"cell {index} is not an object")
    kind = cell.get("cell_type")
    if not isinstance(kind, str):
        raise _BadNotebook(f"cell {index} has no cell_type")
    source = _joined(cell.get("source", ""), f"the source of cell {index}")
    cell_id = cell.get("id")
    head = f'<cell index="{index}"'
    head += f' id="{cell_id}"' if isinstance(cell_id, str) else ""
    head += f' type="{kind}"' + (f' language="{language}"' if kind == "code" else "") + ">"
    items: list[Item] = [f"{head}\n{_cut(source)}\n"]
    outputs = cell.get("outputs") if kind == "code" else None
    for output in outputs if isinstance(outputs, list) else []:
        items.extend(_output(index, output, images))
    items.append("</cell>\n")
    return items


def _output(index: int, output: Any, images: list[int]) -> list[Item]:
    if not isinstance(output, dict):
        raise _BadNotebook(f"an output of cell {index} is not an object")
    kind = output.get("output_type")
    where = f"an output of cell {index}"
    if kind == "stream":
        name = output.get("name", "stdout")
        text = _joined(output.get("text", ""), where)
        return [f'<output type="stream" name="{name}">\n{_cut(text)}\n</output>\n']
    if kind == "error":
        trace = output.get("traceback")
        lines = trace if isinstance(trace, list) else []
        text = (
            "\n".join(str(line) for line in lines)
            or f"{output.get('ename')}: {output.get('evalue')}"
        )
        return [f'<output type="error">\n{_cut(_ANSI.sub("", text))}\n</output>\n']
    data = output.get("data")
    if kind not in ("execute_result", "display_data") or not isinstance(data, dict):
        return [f'<output type="{kind}"/>\n']
    items: list[Item] = []
    for media_type in _IMAGE_OUTPUT_TYPES:
        if media_type in data:
            encoded = "".join(_joined(data[media_type], where).split())
            if images[0] >= MAX_NOTEBOOK_IMAGES or len(encoded) > MAX_IMAGE_BYTES * 4 // 3:
                items.append(f"[{media_type} output not shown: too many or too large images]\n")
            else:
                images[0] += 1
                source = {"type": "base64", "media_type": media_type, "data": encoded}
                items.append({"type": "image", "source": source})
            break
    for media_type in _TEXT_OUTPUT_TYPES:
        if media_type in data:
            value = data[media_type]
            if isinstance(value, (str, list)):
                text = _joined(value, where)
            else:  # application/json holds the object itself
                text = json.dumps(value, ensure_ascii=False, indent=1)
            items.insert(
                0, f'<output type="{kind}" mime="{media_type}">\n{_cut(text)}\n</output>\n'
            )
            break
    return items or [f'<output type="{kind}"/>\n']


def _joined(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    raise _BadNotebook(f"{what} is neither text nor a list of text")


def _cut(text: str) -> str:
    text = text.rstrip("\n")
    if len(text) <= MAX_CELL_OUTPUT_CHARS:
        return text
    left = len(text) - MAX_CELL_OUTPUT_CHARS
    return f"{text[:MAX_CELL_OUTPUT_CHARS]}\n[… {left:,} more characters cut]"


def _blocks(items: list[Item]) -> str | list[dict[str, Any]]:
    """One string when there are no images; else text and image blocks, in order."""
    if all(isinstance(item, str) for item in items):
        return "".join(item for item in items if isinstance(item, str)).rstrip("\n")
    blocks: list[dict[str, Any]] = []
    text: list[str] = []
    for item in items:
        if isinstance(item, str):
            text.append(item)
            continue
        if text:
            blocks.append({"type": "text", "text": "".join(text)})
            text = []
        blocks.append(item)
    if text:
        blocks.append({"type": "text", "text": "".join(text)})
    return blocks
