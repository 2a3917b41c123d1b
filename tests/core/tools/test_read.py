"""Read, through the real lifecycle: what the model sees for each kind of file, and what is
recorded for read-before-edit."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import ScriptedPort, make_context

from core.access.targets import PathTarget
from core.executor import ExecutorServices, ToolCall, ToolCallOutcome, run_tool_use
from core.tool import ToolContext
from core.tools.files import file_key
from core.tools.read import Read
from core.tools.read_media import MAX_IMAGE_BYTES
from core.tools.read_result import MAX_OUTPUT_CHARS, FileRead

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def context(tmp_path: Path) -> ToolContext:
    return make_context([Read()], cwd=tmp_path)


async def read(ctx: ToolContext, **input: Any) -> ToolCallOutcome:
    services = ExecutorServices(permission_port=ScriptedPort())
    return await run_tool_use(ToolCall("toolu_1", "Read", input), services, ctx)


def text(outcome: ToolCallOutcome) -> str:
    content = outcome.block["content"]
    assert isinstance(content, str)
    return content


async def test_lines_are_numbered_like_cat_n(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("first\n\tsecond\nthird\n")
    outcome = await read(context(tmp_path), file_path=str(path))
    assert not outcome.is_error
    assert text(outcome) == "     1\tfirst\n     2\t\tsecond\n     3\tthird"
    assert isinstance(outcome.data, FileRead) and outcome.data.total == 3


async def test_crlf_is_not_shown_and_a_last_line_without_newline_counts(tmp_path: Path) -> None:
    path = tmp_path / "w.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree")
    assert text(await read(context(tmp_path), file_path=str(path))) == (
        "     1\tone\n     2\ttwo\n     3\tthree"
    )


async def test_offset_and_limit_and_the_note_on_how_to_read_on(tmp_path: Path) -> None:
    path = tmp_path / "many.txt"
    path.write_text("".join(f"line {n}\n" for n in range(1, 101)))
    ctx = context(tmp_path)
    shown = text(await read(ctx, file_path=str(path), offset=10, limit=5))
    assert shown.splitlines()[:5] == [f"{n:>6}\tline {n}" for n in range(10, 15)]
    assert "lines 10-14 of 100" in shown and "offset=15" in shown
    record = ctx.read_file_state.get(file_key(path))
    assert record is not None and (record.offset, record.limit) == (10, 5)
    assert record.mtime_ns == os.stat(path).st_mtime_ns


async def test_default_limit_is_2000_lines(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("x\n" * 2500)
    shown = text(await read(context(tmp_path), file_path=str(path)))
    assert f"{2000:>6}\tx" in shown and f"{2001:>6}\t" not in shown
    assert "offset=2001" in shown


async def test_an_offset_past_the_end_says_how_long_the_file_is(tmp_path: Path) -> None:
    path = tmp_path / "short.txt"
    path.write_text("a\nb\n")
    outcome = await read(context(tmp_path), file_path=str(path), offset=50)
    assert not outcome.is_error and "has 2 lines" in text(outcome)


async def test_long_lines_are_cut(tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_text("y" * 5000 + "\nshort\n")
    lines = text(await read(context(tmp_path), file_path=str(path))).splitlines()
    assert lines[0].startswith("     1\t" + "y" * 2000 + "…")
    assert "3,000 more characters" in lines[0]
    assert lines[1] == "     2\tshort"


async def test_output_is_bounded_and_says_where_to_continue(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_text(("z" * 1500 + "\n") * 1000)
    ctx = context(tmp_path)
    outcome = await read(ctx, file_path=str(path))
    shown = text(outcome)
    assert len(shown) <= MAX_OUTPUT_CHARS + 300
    assert "Output stopped after line" in shown
    assert outcome.persisted is None  # Read bounds itself: never persisted
    record = ctx.read_file_state.get(file_key(path))
    assert record is not None and record.limit is not None and record.limit < 1000


async def test_an_empty_file_gets_a_notice(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_text("")
    ctx = context(tmp_path)
    outcome = await read(ctx, file_path=str(path))
    assert not outcome.is_error and "exists but is empty" in text(outcome)
    assert file_key(path) in ctx.read_file_state


async def test_a_relative_path_is_refused_with_the_absolute_one(tmp_path: Path) -> None:
    outcome = await read(context(tmp_path), file_path="src/a.py")
    assert outcome.is_error and outcome.failed_stage == "validate"
    assert "absolute" in text(outcome) and str(tmp_path / "src/a.py") in text(outcome)


async def test_a_directory_points_to_glob_and_ls(tmp_path: Path) -> None:
    outcome = await read(context(tmp_path), file_path=str(tmp_path))
    assert outcome.is_error and outcome.failed_stage == "call"
    assert "is a directory" in text(outcome)
    assert "Glob" in text(outcome) and "ls" in text(outcome)


async def test_a_missing_file_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("a: 1\n")
    outcome = await read(context(tmp_path), file_path=str(tmp_path / "config.yml"))
    assert outcome.is_error and "does not exist" in text(outcome)
    assert "config.yaml" in text(outcome)


async def test_a_binary_file_is_refused_with_what_to_use(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(256)) * 4)
    outcome = await read(context(tmp_path), file_path=str(path))
    assert outcome.is_error and "binary" in text(outcome) and "xxd" in text(outcome)


async def test_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    outcome = await read(context(tmp_path), file_path=str(path))
    assert outcome.is_error and "named pipe" in text(outcome)


async def test_non_utf8_text_is_read_as_latin1_and_utf16_by_its_bom(tmp_path: Path) -> None:
    latin = tmp_path / "latin.txt"
    latin.write_bytes("café\n".encode("latin-1"))
    assert text(await read(context(tmp_path), file_path=str(latin))) == "     1\tcafé"
    wide = tmp_path / "wide.txt"
    wide.write_bytes("\ufeffhé\n".encode("utf-16-le"))
    assert text(await read(context(tmp_path), file_path=str(wide))) == "     1\thé"


async def test_wrong_types_get_a_schema_error(tmp_path: Path) -> None:
    outcome = await read(context(tmp_path), file_path=str(tmp_path / "x"), offset=-1)
    assert outcome.is_error and outcome.failed_stage == "schema" and "offset" in text(outcome)
    outcome = await read(context(tmp_path), file_path=5)
    assert outcome.is_error and outcome.failed_stage == "schema"


async def test_images_come_back_as_image_blocks(tmp_path: Path) -> None:
    path = tmp_path / "dot.png"
    path.write_bytes(PNG)
    ctx = context(tmp_path)
    outcome = await read(ctx, file_path=str(path))
    assert not outcome.is_error
    content = outcome.block["content"]
    assert content == [
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(PNG).decode(),
            },
        }
    ]
    assert file_key(path) in ctx.read_file_state


async def test_the_media_type_comes_from_the_bytes_and_a_fake_image_is_refused(
    tmp_path: Path,
) -> None:
    lying = tmp_path / "photo.jpg"
    lying.write_bytes(PNG)
    content = (await read(context(tmp_path), file_path=str(lying))).block["content"]
    assert isinstance(content, list) and content[0]["source"]["media_type"] == "image/png"
    fake = tmp_path / "fake.png"
    fake.write_text("not an image")
    outcome = await read(context(tmp_path), file_path=str(fake))
    assert outcome.is_error and "not a PNG" in text(outcome)


async def test_a_too_large_image_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "huge.png"
    path.write_bytes(PNG + b"\0" * MAX_IMAGE_BYTES)
    outcome = await read(context(tmp_path), file_path=str(path))
    assert outcome.is_error and "more than Read reads" in text(outcome)


def text_pdf(pages: list[str]) -> bytes:
    """A minimal PDF whose pages hold the given text in Helvetica."""
    count = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(count))
    font = 3 + 2 * count
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>",
    ]
    for i, words in enumerate(pages):
        stream = f"BT /F1 12 Tf 72 720 Td ({words}) Tj ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return out


async def test_pdfs_are_read_as_text_page_by_page(tmp_path: Path) -> None:
    path = tmp_path / "doc.pdf"
    path.write_bytes(text_pdf(["Hello first page", "Second page here", "Third"]))
    shown = text(await read(context(tmp_path), file_path=str(path)))
    assert "--- Page 1 of 3 ---\nHello first page" in shown
    assert "--- Page 2 of 3 ---\nSecond page here" in shown
    assert shown.index("Page 1 of 3") < shown.index("Page 3 of 3")


async def test_pdf_offset_and_limit_count_pages_and_the_page_cap(tmp_path: Path) -> None:
    path = tmp_path / "long.pdf"
    path.write_bytes(text_pdf([f"Page text {n}" for n in range(1, 106)]))
    shown = text(await read(context(tmp_path), file_path=str(path)))
    assert "--- Page 100 of 105 ---" in shown and "Page 101 of" not in shown
    assert "offset=101" in shown
    shown = text(await read(context(tmp_path), file_path=str(path), offset=104, limit=5))
    assert "Page text 104" in shown and "Page text 105" in shown and "Page text 103" not in shown


async def test_a_damaged_pdf_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.pdf"
    path.write_text("this is not a pdf")
    outcome = await read(context(tmp_path), file_path=str(path))
    assert outcome.is_error and "could not be read as a PDF" in text(outcome)


def notebook(cells: list[dict[str, Any]]) -> str:
    return json.dumps(
        {
            "cells": cells,
            "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


async def test_notebooks_show_cells_with_their_outputs(tmp_path: Path) -> None:
    path = tmp_path / "n.ipynb"
    path.write_text(
        notebook(
            [
                {
                    "cell_type": "markdown",
                    "id": "m1",
                    "metadata": {},
                    "source": ["# Title\n", "text"],
                },
                {
                    "cell_type": "code",
                    "id": "c1",
                    "metadata": {},
                    "execution_count": 1,
                    "source": "print('hi')\n1 + 1",
                    "outputs": [
                        {"output_type": "stream", "name": "stdout", "text": ["hi\n"]},
                        {
                            "output_type": "execute_result",
                            "execution_count": 1,
                            "metadata": {},
                            "data": {"text/plain": ["2"]},
                        },
                        {
                            "output_type": "error",
                            "ename": "ValueError",
                            "evalue": "bad",
                            "traceback": ["\x1b[31mValueError\x1b[0m: bad"],
                        },
                    ],
                },
            ]
        )
    )
    shown = text(await read(context(tmp_path), file_path=str(path)))
    assert '<cell index="1" id="m1" type="markdown">\n# Title\ntext\n</cell>' in shown
    assert 'type="code" language="python">\nprint(\'hi\')\n1 + 1' in shown
    assert '<output type="stream" name="stdout">\nhi\n</output>' in shown
    assert "\n2\n</output>" in shown
    assert "ValueError: bad" in shown and "\x1b" not in shown


async def test_notebook_image_outputs_become_image_blocks(tmp_path: Path) -> None:
    encoded = base64.b64encode(PNG).decode()
    path = tmp_path / "plot.ipynb"
    path.write_text(
        notebook(
            [
                {
                    "cell_type": "code",
                    "source": "plot()",
                    "metadata": {},
                    "outputs": [
                        {
                            "output_type": "display_data",
                            "metadata": {},
                            "data": {"image/png": encoded, "text/plain": "<Figure>"},
                        }
                    ],
                }
            ]
        )
    )
    content = (await read(context(tmp_path), file_path=str(path))).block["content"]
    assert isinstance(content, list)
    assert [block["type"] for block in content] == ["text", "image", "text"]
    assert content[1]["source"] == {"type": "base64", "media_type": "image/png", "data": encoded}
    assert "<Figure>" in content[0]["text"]


@pytest.mark.parametrize(
    "body",
    ["{not json", json.dumps({"cells": "nope"}), json.dumps({"cells": [{"source": "x"}]})],
)
async def test_a_malformed_notebook_is_an_error(tmp_path: Path, body: str) -> None:
    path = tmp_path / "broken.ipynb"
    path.write_text(body)
    outcome = await read(context(tmp_path), file_path=str(path))
    assert outcome.is_error and "not a valid Jupyter notebook" in text(outcome)


def test_read_is_read_only_safe_and_targets_the_path(tmp_path: Path) -> None:
    tool = Read()
    parsed = tool.parse_input({"file_path": "/etc/hosts"})
    assert tool.is_read_only(parsed) and tool.is_concurrency_safe(parsed)
    assert tool.interrupt_behavior == "block"
    assert tool.rule_target(parsed, tmp_path) == PathTarget(Path("/etc/hosts"), "read")
    schema = tool.input_json_schema()
    assert schema["required"] == ["file_path"]
    assert all("description" in field for field in schema["properties"].values())


async def test_reading_outside_the_working_directory_asks(tmp_path: Path) -> None:
    inside = tmp_path / "work"
    inside.mkdir()
    outside = tmp_path / "other.txt"
    outside.write_text("secret\n")
    port = ScriptedPort()
    services = ExecutorServices(permission_port=port)
    ctx = make_context([Read()], cwd=inside)
    outcome = await run_tool_use(
        ToolCall("toolu_1", "Read", {"file_path": str(outside)}), services, ctx
    )
    assert len(port.requests) == 1 and not outcome.is_error
