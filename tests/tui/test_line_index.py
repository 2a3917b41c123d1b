"""The viewer's line index and saved-output listing, without Textual."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui.viewer import LineIndex, human_size, scan_saved_outputs


def index_of(tmp_path: Path, data: bytes, **options: int) -> LineIndex:
    path = tmp_path / "out.txt"
    path.write_bytes(data)
    return LineIndex(path, **options)


def all_lines(index: LineIndex) -> list[str]:
    return index.lines(0, 10**9)


def test_lines_split_on_newlines_and_a_last_line_without_one_still_counts(tmp_path):
    with index_of(tmp_path, b"alpha\nbeta\n\ngamma") as index:
        assert all_lines(index) == ["alpha", "beta", "", "gamma"]
        assert index.count_all() == 4
        assert index.line_start(3) == len(b"alpha\nbeta\n\n")
        assert index.line(4) is None


def test_crlf_endings_are_dropped_from_the_text(tmp_path):
    with index_of(tmp_path, b"one\r\ntwo\r\n") as index:
        assert all_lines(index) == ["one", "two"]
        assert index.count_all() == 2


def test_an_empty_file_has_no_lines(tmp_path):
    with index_of(tmp_path, b"") as index:
        assert index.count_all() == 0
        assert index.line(0) is None
        assert index.search("x", 0) is None


def test_invalid_utf8_is_shown_with_replacement_characters(tmp_path):
    with index_of(tmp_path, b"ok\n\xff\xfebin\x00ary\n") as index:
        assert index.line(1) == "\ufffd\ufffdbin\x00ary"


def test_a_growing_file_is_picked_up_by_refresh(tmp_path):
    path = tmp_path / "spool.txt"
    path.write_bytes(b"first\nsec")
    with LineIndex(path, block_size=4) as index:
        assert index.count_all() == 2
        with open(path, "ab") as file:
            file.write(b"ond\nthird\n" * 3)
        assert index.line(5) is None  # not seen before refresh
        assert index.refresh() is True
        assert index.refresh() is False
        assert index.count_all() == 7  # first, second, third, then "ond", "third" twice
        assert index.line(1) == "second"
        assert index.line(6) == "third"


def test_a_file_that_shrank_is_indexed_again(tmp_path):
    path = tmp_path / "spool.txt"
    path.write_bytes(b"a\nb\nc\nd\n")
    with LineIndex(path, block_size=2) as index:
        assert index.count_all() == 4
        path.write_bytes(b"x\ny\n")
        index.refresh()
        assert all_lines(index) == ["x", "y"]
        assert index.count_all() == 2


def test_lines_are_indexed_only_as_far_as_asked(tmp_path):
    data = b"".join(b"line %d\n" % n for n in range(100_000))
    with index_of(tmp_path, data, block_size=1024) as index:
        assert index.line(0) == "line 0"
        assert index.indexed_bytes < len(data)
        assert not index.is_complete
        assert index.line(99_999) == "line 99999"
        assert index.count_all() == 100_000


def test_sparse_checkpoints_find_every_line_of_a_few_megabytes(tmp_path):
    # Lines of varied length (including empty and longer-than-a-block ones) so that line
    # starts fall everywhere relative to the block edges.
    lines = [("x" * ((n * 37) % 300)) + f"#{n}" if n % 11 else "" for n in range(40_000)]
    lines[123] = "y" * 5000
    data = "\n".join(lines).encode() + b"\n"
    with index_of(tmp_path, data, block_size=512) as index:
        assert index.count_all() == len(lines)
        for number in (0, 1, 122, 123, 124, 511, 20_000, 39_998, 39_999):
            assert index.line(number) == lines[number]
        expected_start = sum(len(line) + 1 for line in lines[:30_001])
        assert index.line_start(30_001) == expected_start
        assert index.line_of_offset(expected_start) == 30_001
        assert index.line_of_offset(expected_start - 1) == 30_000


def test_search_finds_the_next_match_case_insensitively_and_wraps(tmp_path):
    data = b"apple\nBanana\ncherry\nbanana split\nend\n"
    with index_of(tmp_path, data, block_size=8) as index:
        assert index.search("banana", 0) == 1
        assert index.search("banana", 2) == 3
        assert index.search("banana", 4) == 1  # wrapped
        assert index.search("BANANA", 3, backwards=True) == 3
        assert index.search("banana", 2, backwards=True) == 1
        assert index.search("banana", 0, backwards=True) == 3  # wrapped
        assert index.search("durian", 0) is None


def test_search_finds_a_match_across_a_scan_chunk_edge(tmp_path, monkeypatch):
    from tui.viewer import line_index

    monkeypatch.setattr(line_index, "SCAN_CHUNK", 16)
    data = b"0123456789\n" * 5 + b"needle here\n" + b"tail\n"
    with index_of(tmp_path, data, block_size=4) as index:
        assert index.search("needle", 0) == 5
        assert index.search("needle", 6, backwards=True) == 5
        assert index.search("needle", 4, backwards=True) == 5  # wrapped from the end


def test_lines_can_be_cut_to_a_byte_limit(tmp_path):
    with index_of(tmp_path, b"a" * 10_000 + b"\nb\n") as index:
        assert index.line(0, max_bytes=100) == "a" * 100
        assert index.line(1) == "b"


def test_an_unreadable_file_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        LineIndex(tmp_path / "missing.txt")


def test_saved_outputs_are_listed_newest_first_without_side_files(tmp_path):
    results = tmp_path / "tool-results"
    shells = tmp_path / "shells"
    results.mkdir()
    shells.mkdir()
    (results / "toolu_old.txt").write_text("\n  old result\nmore\n")
    (results / ".tmp-123.txt").write_text("partial")
    (shells / "1-build.txt").write_bytes(b"\xffcompiling\n")
    (shells / "1-build.cwd").write_text("/tmp\n")
    os.utime(results / "toolu_old.txt", (1000, 1000))
    os.utime(shells / "1-build.txt", (2000, 2000))

    outputs = scan_saved_outputs(tmp_path, live_spools=[shells / "1-build.txt"])

    assert [o.tool_use_id for o in outputs] == ["1-build", "toolu_old"]
    assert outputs[0].running and outputs[0].is_spool
    assert outputs[0].first_line == "\ufffdcompiling"
    assert outputs[1].first_line == "old result"
    assert not outputs[1].running
    assert outputs[1].size_bytes == len("\n  old result\nmore\n")


def test_a_session_without_saved_outputs_lists_nothing(tmp_path):
    assert scan_saved_outputs(tmp_path) == []


def test_sizes_read_like_a_person_would_write_them():
    assert human_size(512) == "512 B"
    assert human_size(1536) == "1.5 KB"
    assert human_size(3 * 1024**3) == "3.0 GB"


def test_the_model_does_not_import_textual_or_rich():
    code = "import sys, tui.viewer; print('textual' in sys.modules or 'rich' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_matching_lines_are_counted_up_to_a_line(tmp_path, monkeypatch):
    from tui.viewer import line_index

    monkeypatch.setattr(line_index, "SCAN_CHUNK", 8)
    data = b"foo foo\nbar\nFOO\nbaz\nxfoo\na line longer than a chunk, foo\nfoo"
    with index_of(tmp_path, data, block_size=4) as index:
        assert index.count_matching_lines("foo", 0) == 1  # two on one line count once
        assert index.count_matching_lines("foo", 3) == 2
        assert index.count_matching_lines("foo", 4) == 3
        assert index.count_matching_lines("foo", 6) == 5
        assert index.count_matching_lines("nothing", 6) == 0


def test_a_closed_index_reads_as_empty(tmp_path):
    index = index_of(tmp_path, b"a\nb\n")
    index.close()
    assert index.line(0) is None
    assert index.search("a", 0) is None
    assert index.count_matching_lines("a", 1) == 0
