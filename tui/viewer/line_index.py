"""Random access to the lines of a file of any size, without reading the whole file.

Why it is shaped this way:

- The file is memory-mapped and indexed lazily: opening costs an `fstat` and an `mmap`, and
  showing the first screen touches only the first block. Everything past what has been asked
  for stays unread until a caller asks for a later line or runs `advance()` (the viewer does,
  in a background thread, to learn the line count).
- The index is sparse and by bytes, not by lines: for every full block of `block_size` bytes
  it stores how many newlines end at or before the block's end (one `array('Q')` entry per
  block). A 1 GB file of 10-byte lines would need 800 MB for one offset per line; this needs
  128 KB. A line's start is found by bisecting the blocks and then locating the newline inside
  one block, whose newline positions are cached for the few most recent blocks (a screen's
  worth of lines nearly always lies in one or two blocks).
- Counting newlines uses `bytes.count` over 4 MB slices (C speed); after a slice is scanned its
  pages are given back with `madvise(MADV_DONTNEED)`, because file-backed pages a mapping has
  touched count towards the process's RSS even though they are only page cache.
- The partial block at the end of the file is never stored, only scanned when needed (it is
  smaller than a block), so `refresh()` after an append keeps every stored block valid. A file
  that shrank was rewritten: the index starts again.
- Lines end at `\\n`; a `\\r` before it is dropped, and a last line without a newline is still
  a line. An empty file has no lines. Text is decoded as UTF-8 with `errors="replace"`, so
  binary output still displays.
- `search()` is a case-insensitive *literal* search (ASCII case folding, as `bytes.lower`
  does), scanning the map in chunks with an overlap so a match across a chunk edge is found.
- A lock makes the index safe to extend from a worker thread while the UI reads lines.
  A file truncated behind a live map would fault on access; `refresh()` notices a shrink and
  remaps before any read beyond the new end, which is as close as a reader can get.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import threading
from array import array
from bisect import bisect_left
from collections import OrderedDict
from pathlib import Path
from types import TracebackType

DEFAULT_BLOCK_SIZE = 64 * 1024
SCAN_CHUNK = 4 * 1024 * 1024
CACHED_BLOCKS = 16


class LineIndex:
    """The lines of `path`, indexed on demand. Raises `OSError` if the file cannot be opened."""

    def __init__(self, path: str | os.PathLike[str], *, block_size: int = DEFAULT_BLOCK_SIZE):
        if block_size <= 0:
            raise ValueError("block_size must be positive")
        self.path = Path(path)
        self.block_size = block_size
        self._lock = threading.RLock()
        self._file = open(self.path, "rb")  # noqa: SIM115 - lives as long as the index
        self._map: mmap.mmap | None = None
        self._size = 0
        self._newlines_through = array("Q")
        self._positions: OrderedDict[tuple[int, int], array[int]] = OrderedDict()
        self._closed = False
        self._map_current_size()

    # -- life cycle -------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._size = 0  # every query now finds an empty file instead of a closed map
            self._newlines_through = array("Q")
            self._positions.clear()
            if self._map is not None:
                self._map.close()
                self._map = None
            self._file.close()

    def __enter__(self) -> LineIndex:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def refresh(self) -> bool:
        """Pick up a change of size (a growing spool); True if the file changed."""
        with self._lock:
            if self._closed:
                return False
            size = os.fstat(self._file.fileno()).st_size
            if size == self._size:
                return False
            if size < self._size:
                self._newlines_through = array("Q")
            self._positions.clear()
            self._map_current_size()
            return True

    def _map_current_size(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        self._size = os.fstat(self._file.fileno()).st_size
        # mmap refuses a length of 0, so an empty file simply has no map.
        if self._size:
            self._map = mmap.mmap(self._file.fileno(), self._size, access=mmap.ACCESS_READ)

    # -- what is known ----------------------------------------------------------------------

    @property
    def size(self) -> int:
        return self._size

    @property
    def indexed_bytes(self) -> int:
        return len(self._newlines_through) * self.block_size

    @property
    def is_complete(self) -> bool:
        """Whether every full block has been counted, so `line_count` is exact."""
        return len(self._newlines_through) >= self._size // self.block_size

    @property
    def line_count(self) -> int:
        """The number of lines: exact once `is_complete`, until then a lower bound."""
        with self._lock:
            counted = self._newlines_through[-1] if self._newlines_through else 0
            if not self.is_complete:
                return counted
            tail_start = self.indexed_bytes
            newlines = counted + len(self._newline_positions(tail_start, self._size))
            unterminated = self._size > 0 and self._byte_at(self._size - 1) != 0x0A
            return newlines + int(unterminated)

    def advance(self, max_bytes: int = 64 * SCAN_CHUNK) -> bool:
        """Count up to `max_bytes` more of the file; True while more remains to count."""
        target = self.indexed_bytes + max_bytes
        while not self.is_complete and self.indexed_bytes < target:
            with self._lock:  # a chunk at a time, so readers wait at most one chunk
                if not self.is_complete:
                    self._count_next_chunk()
        return not self.is_complete

    def count_all(self) -> int:
        while self.advance():
            pass
        return self.line_count

    # -- lines ------------------------------------------------------------------------------

    def line_start(self, number: int) -> int | None:
        """The byte offset where line `number` (0-based) starts, or None past the last line."""
        if number < 0:
            return None
        with self._lock:
            if number == 0:
                return 0 if self._size else None
            newline = self._nth_newline(number)
            if newline is None or newline + 1 >= self._size:
                return None
            return newline + 1

    def line(self, number: int, *, max_bytes: int = 1 << 20) -> str | None:
        """Line `number` as text without its line ending, cut after `max_bytes` bytes."""
        with self._lock:
            start = self.line_start(number)
            if start is None or self._map is None:
                return None
            limit = min(self._size, start + max_bytes)
            end = self._map.find(b"\n", start, limit)
            data = self._map[start : limit if end < 0 else end]
        if data.endswith(b"\r"):
            data = data[:-1]
        return data.decode("utf-8", errors="replace")

    def lines(self, first: int, count: int, *, max_bytes: int = 1 << 20) -> list[str]:
        found: list[str] = []
        for number in range(first, first + count):
            text = self.line(number, max_bytes=max_bytes)
            if text is None:
                break
            found.append(text)
        return found

    def line_of_offset(self, offset: int) -> int:
        """The number of the line holding byte `offset`."""
        with self._lock:
            block = offset // self.block_size
            while len(self._newlines_through) <= block and not self.is_complete:
                self._count_next_chunk()
            if block < len(self._newlines_through):
                start = block * self.block_size
                end = start + self.block_size
                before = self._newlines_through[block - 1] if block else 0
            else:
                start, end = self.indexed_bytes, self._size
                before = self._newlines_through[-1] if self._newlines_through else 0
            return before + bisect_left(self._newline_positions(start, end), offset)

    # -- search -----------------------------------------------------------------------------

    def search(self, pattern: str, start_line: int, *, backwards: bool = False) -> int | None:
        """The first line at or after `start_line` (or, `backwards`, the last at or before it)
        containing `pattern`, wrapping round the file; None if no line does.

        The lock is held one chunk at a time, so lines can be read while a search runs."""
        needle = pattern.encode("utf-8").lower()
        size = self._size
        if not needle or not size:
            return None
        if backwards:
            start = self.line_start(start_line) if start_line >= 0 else None
            end = size if start is None else self._line_end(start)
            found = self._rfind(needle, 0, end)
            if found < 0:
                found = self._rfind(needle, 0, size)
        else:
            start = self.line_start(max(start_line, 0))
            found = -1 if start is None else self._find(needle, start, size)
            if found < 0:
                found = self._find(needle, 0, size)
        return None if found < 0 else self.line_of_offset(found)

    def count_matching_lines(self, pattern: str, last_line: int) -> int:
        """How many of lines 0..`last_line` contain `pattern` (for "match 3 at line ...")."""
        needle = pattern.encode("utf-8").lower()
        if not needle or last_line < 0:
            return 0
        following = self.line_start(last_line + 1)
        end = self._size if following is None else following
        count, position = 0, 0
        while position < end:
            # Chunks end just after a newline, so no match straddles two of them.
            data = self._chunk(position, min(end, position + SCAN_CHUNK))
            if not data:
                break
            cut = data.rfind(b"\n") + 1 if position + len(data) < end else len(data)
            if cut == 0:  # one line longer than a chunk: take it whole
                cut = self._line_end(position) + 1 - position
                data = self._chunk(position, position + cut)
            data = data[:cut].lower()
            found = data.find(needle)
            while found >= 0:
                count += 1
                newline = data.find(b"\n", found)
                if newline < 0:
                    break
                found = data.find(needle, newline + 1)
            position += cut
        return count

    def _find(self, needle: bytes, start: int, end: int) -> int:
        overlap = len(needle) - 1
        for chunk_start in range(start, end, SCAN_CHUNK):
            data = self._chunk(chunk_start, min(end, chunk_start + SCAN_CHUNK + overlap))
            found = data.lower().find(needle)
            if found >= 0:
                return chunk_start + found
        return -1

    def _rfind(self, needle: bytes, start: int, end: int) -> int:
        overlap = len(needle) - 1
        chunk_end = end
        while chunk_end - start >= len(needle):
            chunk_start = max(start, chunk_end - SCAN_CHUNK - overlap)
            found = self._chunk(chunk_start, chunk_end).lower().rfind(needle)
            if found >= 0:
                return chunk_start + found
            if chunk_start == start:
                break
            chunk_end = chunk_start + overlap
        return -1

    def _chunk(self, start: int, end: int) -> bytes:
        """A copy of bytes `start:end` (cut at the end of the file); empty once closed."""
        with self._lock:
            if self._map is None:
                return b""
            end = min(end, self._size)
            data = self._map[start:end]
            self._release(start, end)
            return data

    def _line_end(self, start: int) -> int:
        """The offset of the newline ending the line that starts at `start`, or the file's end."""
        with self._lock:
            if self._map is None:
                return start
            newline = self._map.find(b"\n", start)
            return self._size if newline < 0 else newline

    # -- the index itself -------------------------------------------------------------------

    def _count_next_chunk(self) -> None:
        """Count the newlines of the next run of full blocks (at most one scan chunk)."""
        assert self._map is not None
        block = self.block_size
        start = self.indexed_bytes
        full_blocks_end = (self._size // block) * block
        end = min(full_blocks_end, start + max(block, (SCAN_CHUNK // block) * block))
        data = self._map[start:end]
        total = self._newlines_through[-1] if self._newlines_through else 0
        counts = array("Q")
        for offset in range(0, len(data), block):
            total += data.count(b"\n", offset, offset + block)
            counts.append(total)
        self._newlines_through.extend(counts)
        self._release(start, end)

    def _nth_newline(self, n: int) -> int | None:
        """The offset of the `n`-th newline (1-based), counting further only as needed."""
        while (
            not self._newlines_through or self._newlines_through[-1] < n
        ) and not self.is_complete:
            self._count_next_chunk()
        block = bisect_left(self._newlines_through, n)
        if block < len(self._newlines_through):
            start = block * self.block_size
            end = start + self.block_size
            before = self._newlines_through[block - 1] if block else 0
        else:
            start, end = self.indexed_bytes, self._size
            before = self._newlines_through[-1] if self._newlines_through else 0
        positions = self._newline_positions(start, end)
        wanted = n - before
        return positions[wanted - 1] if 0 < wanted <= len(positions) else None

    def _newline_positions(self, start: int, end: int) -> array[int]:
        key = (start, end)
        cached = self._positions.get(key)
        if cached is not None:
            self._positions.move_to_end(key)
            return cached
        positions = array("Q")
        if self._map is not None and end > start:
            data = self._map[start:end]
            found = data.find(b"\n")
            while found >= 0:
                positions.append(start + found)
                found = data.find(b"\n", found + 1)
        self._positions[key] = positions
        if len(self._positions) > CACHED_BLOCKS:
            self._positions.popitem(last=False)
        return positions

    def _byte_at(self, offset: int) -> int:
        assert self._map is not None
        return self._map[offset]

    def _release(self, start: int, end: int) -> None:
        """Let the kernel drop the mapping's pages for a scanned range (they stay cached)."""
        if self._map is None or not hasattr(mmap, "MADV_DONTNEED"):
            return
        aligned = start - start % mmap.PAGESIZE
        with contextlib.suppress(OSError, ValueError):
            self._map.madvise(mmap.MADV_DONTNEED, aligned, end - aligned)


def lines_known_text(index: LineIndex) -> str:
    """How many lines the file has, as far as is known: "1,204" or "at least 90,000"."""
    count = f"{index.line_count:,}"
    return count if index.is_complete else f"at least {count}"


__all__ = ["DEFAULT_BLOCK_SIZE", "LineIndex", "lines_known_text"]
