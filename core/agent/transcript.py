"""The session transcript: one JSON object per line, appended, never rewritten.

Everything a session did goes here in order: every message, the engine events of every
tool call (permission questions and answers included; progress only streams, see
`belongs_in_transcript`), what hooks decided (`HookRan`), turn ends and a clean end.
Resuming rebuilds the conversation from it (transcript_resume.py), and `proctor sessions`
summarises it.

This module is the file: appending, reading back, repairing, and `transcribing`, the sink
that writes the session's events to it. What each record holds is transcript_records.py.

Why it is shaped this way:

- A crash must cost at most the record being written. Each record is one `os.write` of a
  whole line on an `O_APPEND` descriptor, so a SIGKILL leaves the records already appended
  intact in the page cache. `sync()` (fsync, against power loss) belongs at turn ends and in
  `close()`: per record it would cost a disk flush per event.
- A line without its newline can only be the tail of a write that never finished. Readers
  ignore it (unless it is itself a whole object, which a cut cannot produce), and the first
  append of a new writer truncates it away (`repair`), so the next record starts on a line
  of its own instead of gluing onto the fragment and garbling both.
- A garbled line in the middle (a disk error, a hand edit) is skipped and reported in
  `problems`; the records around it still count. Nothing here raises on bad content.
- Writing never stops the session either: like the audit log, a failed write is kept in
  `error` for the UI, and the next append repairs whatever half line it left.
"""

from __future__ import annotations

import json
import json.encoder
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal

from ..events import EngineEvent, EventSink, ToolProgress
from .events import AssistantMessage, TextDelta, ThinkingDelta, UserMessage
from .transcript_records import event_record, jsonable

# --- the file ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TranscriptProblem:
    line: int
    """1-based line number in the file."""
    kind: Literal["garbled", "cut"]
    """`cut`: the last line, without its newline (a write a crash interrupted)."""
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class Transcript:
    """One transcript file: `append` records, read them back with `records()`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[TranscriptProblem] = []
        """What the last `records()` pass skipped; reset by each pass."""
        self.error: str | None = None
        """Why the last append failed, for the UI; None after one succeeds."""
        self.on_error: Callable[[str], None] | None = None
        """Told once, the first time a record cannot be written, why not (the session says it
        to the person)."""
        self._fd: int | None = None
        self._needs_repair = True

    def append(self, record: Mapping[str, Any]) -> bool:
        """Write one record as one line; False (and `error` set) when it could not be."""
        line = _encode(record)
        try:
            fd = self._open()
            if self._needs_repair:
                self.repair()
            _write_all(fd, line)
        except OSError as error:
            # Whatever part of the line reached the file must not prefix the next record.
            self._needs_repair = True
            self.error = f"the transcript {self.path} could not be written: {error}"
            self._report(str(error))
            return False
        self.error = None
        return True

    def records(self) -> Iterator[dict[str, Any]]:
        """Every whole record in order; garbled lines are skipped into `problems`."""
        self.problems = []
        try:
            file = self.path.open("rb")
        except FileNotFoundError:
            return
        with file:
            for number, line in enumerate(file, start=1):
                whole = line.endswith(b"\n")
                record, why = _decode(line)
                if record is not None:
                    yield record
                elif not whole:
                    self.problems.append(
                        TranscriptProblem(number, "cut", "the last record was cut short")
                    )
                elif why is not None:
                    self.problems.append(TranscriptProblem(number, "garbled", why))

    def repair(self) -> str | None:
        """End the file on a whole line; what was done, or None when nothing was needed.

        A fragment left by an interrupted write is truncated. A last line that is a whole
        record missing only its newline gets the newline instead, so nothing readable goes.
        """
        self._needs_repair = False
        try:
            with self.path.open("r+b") as file:
                size = file.seek(0, os.SEEK_END)
                if size == 0:
                    return None
                file.seek(size - 1)
                if file.read(1) == b"\n":
                    return None
                start = _last_line_start(file, size)
                file.seek(start)
                tail = file.read()
                record, _ = _decode(tail)
                if record is not None:
                    file.write(b"\n")
                    return "added the newline a whole last record was missing"
                file.truncate(start)
                return f"dropped {size - start} bytes of a record cut short by a crash"
        except FileNotFoundError:
            return None

    def sync(self) -> None:
        """Force appended records to disk (turn ends); a failure is kept in `error`."""
        if self._fd is None:
            return
        try:
            os.fsync(self._fd)
        except OSError as error:
            self.error = f"the transcript {self.path} could not be synced: {error}"
            self._report(str(error))

    def _report(self, reason: str) -> None:
        on_error, self.on_error = self.on_error, None  # once: a full disk stays full
        if on_error is not None:
            on_error(reason)

    def close(self) -> None:
        if self._fd is None:
            return
        self.sync()
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            # A transcript holds whatever the agent read: file contents, command output.
            self._fd = os.open(self.path, flags, 0o600)
        return self._fd


def _strict_encoder() -> Callable[[Any], str]:
    """`json.dumps(value, ensure_ascii=False, allow_nan=False)`, minus its per-call cost.

    dumps builds a JSONEncoder and a C encoder for every call; built once, the C encoder
    is a third cheaper per record, and a session writes a record per event. Where the C
    accelerator is missing (another Python), the pure-Python encoder does the same job.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode

    def refuse(value: Any) -> Any:
        raise TypeError(f"{type(value).__name__} is not JSON")

    # markers: the circular-reference check json.dumps makes (a ValueError, not a crash)
    encode = make({}, refuse, json.encoder.encode_basestring, None, ": ", ", ", False, False, False)

    def encoded(value: Any) -> str:
        return "".join(encode(value, 0))

    return encoded


_encode_strictly = _strict_encoder()


def _encode(record: Mapping[str, Any]) -> bytes:
    global _encode_strictly
    try:
        text = _encode_strictly(record)
    except (TypeError, ValueError):
        # A failed pass can leave its containers in the circular-reference markers, where a
        # later object at the same address would be refused: start from a fresh encoder.
        _encode_strictly = _strict_encoder()
        # Not plain JSON (an object, NaN): convert it rather than lose the record.
        text = json.dumps(jsonable(record), ensure_ascii=False, allow_nan=False)
    # A lone surrogate (from undecodable bytes) cannot be UTF-8; as an escape inside the JSON
    # string it reads back as the same character.
    return (text + "\n").encode("utf-8", errors="backslashreplace")


def _decode(line: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The record on a line, or None and why not (None for a blank line)."""
    if not line.strip():
        return None, None
    try:
        value = json.loads(line)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        # RecursionError: `[[[[…` nested deeper than Python parses is no record either.
        return None, f"not JSON ({error})"
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not an object"
    return value, None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _last_line_start(file: BinaryIO, size: int) -> int:
    """Offset just after the last newline (0 when there is none); reads back in blocks."""
    end = size
    while end > 0:
        start = max(0, end - 65_536)
        file.seek(start)
        newline = file.read(end - start).rfind(b"\n")
        if newline != -1:
            return start + newline + 1
        end = start
    return 0


# --- what is written ---------------------------------------------------------------------


def belongs_in_transcript(event: EngineEvent) -> bool:
    """Whether the transcript keeps this event: all but progress.

    Progress is for watching a call live (stream-json prints it); a long command emits it
    many times a second, each with the last few KB of output, which would swell the
    transcript by megabytes and say nothing the call's result does not.
    """
    return not isinstance(event, ToolProgress)


# The main agent's messages are kept as message records (the loop writes them, with model,
# usage and stop reason); text deltas only stream.
_KEPT_AS_MESSAGES = (TextDelta, ThinkingDelta, AssistantMessage, UserMessage)


def transcribing(transcript: Transcript, sink: EventSink) -> EventSink:
    """The session's one sink: each event is written to the transcript, then passed on.

    Every producer (the loop, the executor, tools such as TodoWrite and the mode tools,
    sub-agents, hooks) is given this sink, so the transcript holds everything the front
    end was shown, in the same order."""

    def emit(event: EngineEvent) -> None:
        if belongs_in_transcript(event) and not isinstance(event, _KEPT_AS_MESSAGES):
            transcript.append(event_record(event))
        sink(event)

    return emit
