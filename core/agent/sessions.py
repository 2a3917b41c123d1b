"""Sessions on disk: one directory per session, grouped by project, and finding them again.

    <data dir>/projects/<name>-<hash>/<session id>/
        meta.json         id, project, created, proctor version, model, title (and the
                          workspace, for a demo session: its scratch copy)
        transcript.jsonl  everything that happened (transcript.py)
        audit.jsonl       every permission decision (permissions/audit.py)
        plan.md           the plan file of plan mode
        tool-results/     tool results too large for the context (results.py)

Why it is shaped this way:

- The data dir is `PROCTOR_DATA_DIR` when set (tests, portable installs), else the platform's
  user data dir, mirroring `PROCTOR_CONFIG_DIR` for settings.
- A project's folder is its name (readable in a file manager) plus a hash of its resolved
  path, so two checkouts both called `app` never share sessions.
- Ids are UTC time plus four random hex digits, `20261125-232800-3f9a`: they sort by
  creation, and any unique prefix is enough to type (`--resume 20261125-23`).
- "Latest" means last active (the transcript's mtime), not last created: after resuming an
  old session, `--continue` goes back to that one, and `proctor sessions` lists in the same
  order so its first line is what `--continue` would pick.
- A session missing its meta.json, or with a broken one, is still listed and resumable;
  what meta.json would have said is taken from the id and the transcript instead.
- Listing must stay quick with many long sessions, so it counts records by the `type` that
  the record helpers always write first, parsing only the lines it needs (the first prompt
  for a missing title, the last record to see whether the session ended cleanly).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import platformdirs

from .. import __version__
from ..results import RESULTS_DIRNAME
from .transcript import Transcript

TRANSCRIPT_NAME = "transcript.jsonl"
AUDIT_NAME = "audit.jsonl"
PLAN_NAME = "plan.md"
META_NAME = "meta.json"
TITLE_CHARS = 80

_ID_TIME_FORMAT = "%Y%m%d-%H%M%S"
_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{4}")
_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
_TYPE_PREFIX = b'{"type": "'
_RECENT_IN_ERRORS = 5


class SessionNotFound(LookupError):
    """No session matches, or several do; the message says which ones there are."""

    def __init__(self, message: str, candidates: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.candidates = candidates


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    project: Path
    directory: Path

    @property
    def transcript_path(self) -> Path:
        return self.directory / TRANSCRIPT_NAME

    @property
    def audit_path(self) -> Path:
        return self.directory / AUDIT_NAME

    @property
    def plan_path(self) -> Path:
        return self.directory / PLAN_NAME

    @property
    def results_dir(self) -> Path:
        return self.directory / RESULTS_DIRNAME

    @property
    def meta_path(self) -> Path:
        return self.directory / META_NAME

    def transcript(self) -> Transcript:
        return Transcript(self.transcript_path)


@dataclass(frozen=True, slots=True)
class SessionMeta:
    id: str
    project: str
    created: float
    """Seconds since the epoch."""
    version: str
    model: str
    title: str
    problem: str | None = None
    """Why meta.json could not be read; the other fields are then best guesses."""
    workspace: str = ""
    """Where the agent worked when that is not the project: the demo's scratch copy of the
    sample project (demo sessions are grouped under the sample, not under their copy)."""


@dataclass(frozen=True, slots=True)
class SessionSummary:
    session: Session
    created: float
    last_activity: float
    """The transcript's mtime (seconds since the epoch)."""
    title: str
    model: str
    messages: int
    turns: int
    ended_cleanly: bool
    """The last record is an `end` record: no crash, no kill, no session still running."""

    @property
    def id(self) -> str:
        return self.session.id


# --- where -----------------------------------------------------------------------------------


def data_dir() -> Path:
    override = os.environ.get("PROCTOR_DATA_DIR")
    return Path(override).expanduser() if override else Path(platformdirs.user_data_dir("proctor"))


def project_dir(project: Path) -> Path:
    """The folder holding a project's sessions (it may not exist yet)."""
    resolved = project.expanduser().resolve()
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:10]
    name = _UNSAFE_NAME_CHARS.sub("-", resolved.name).strip("-.")[:40] or "root"
    return data_dir() / "projects" / f"{name}-{digest}"


# --- creating, finding -------------------------------------------------------------------------


def create_session(project: Path, *, model: str = "", workspace: Path | None = None) -> Session:
    """A new, empty session of `project`: its directory, meta.json and transcript file.
    `workspace`: where the agent works, when that is not `project` (the demo's copy)."""
    project = project.expanduser().resolve()
    parent = project_dir(project)
    parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _write_project_note(parent, project)
    now = time.time()
    while True:
        session_id = new_session_id(now)
        directory = parent / session_id
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            continue  # the same second and the same four random digits; draw again
        break
    session = Session(session_id, project, directory)
    meta = SessionMeta(
        session_id,
        str(project),
        now,
        __version__,
        model,
        "",
        workspace=str(workspace) if workspace is not None else "",
    )
    _write_meta(session, meta)
    session.transcript_path.touch(mode=0o600)
    return session


def remove_unused(session: Session) -> None:
    """Remove a session `create_session` made that was never used after all (its transcript
    still empty), so a refusal after preparing it leaves nothing behind; one that holds
    anything is kept."""
    with contextlib.suppress(FileNotFoundError):
        if session.transcript_path.stat().st_size:
            return
    for name in (META_NAME, TRANSCRIPT_NAME):
        with contextlib.suppress(FileNotFoundError):
            (session.directory / name).unlink()
    with contextlib.suppress(OSError):  # something else was put there: keep it
        session.directory.rmdir()


def new_session_id(now: float | None = None) -> str:
    moment = datetime.fromtimestamp(time.time() if now is None else now, tz=UTC)
    return f"{moment.strftime(_ID_TIME_FORMAT)}-{secrets.token_hex(2)}"


def latest_session(project: Path) -> Session | None:
    """The session of `project` active last (for `--continue`), or None if there is none."""
    summaries = _by_activity(project)
    return summaries[0][1] if summaries else None


def find_session(project: Path, id_or_prefix: str) -> Session:
    """The session of `project` whose id is, or uniquely starts with, `id_or_prefix`."""
    wanted = id_or_prefix.strip()
    sessions = [session for _, session in _by_activity(project)]
    where = f"for {project.expanduser().resolve()}"
    if not sessions:
        raise SessionNotFound(f"there are no sessions {where} yet")
    recent = tuple(s.id for s in sessions[:_RECENT_IN_ERRORS])
    if not wanted:
        raise SessionNotFound(f"no session id given; recent sessions: {', '.join(recent)}", recent)
    exact = [s for s in sessions if s.id == wanted]
    if exact:
        return exact[0]
    matches = sorted((s for s in sessions if s.id.startswith(wanted)), key=lambda s: s.id)
    if len(matches) == 1:
        return matches[0]
    if matches:
        ids = tuple(s.id for s in matches)
        raise SessionNotFound(
            f"{wanted!r} matches {len(ids)} sessions {where}: {', '.join(ids)}; "
            "give more of the id",
            ids,
        )
    raise SessionNotFound(
        f"no session {wanted!r} {where}; recent sessions: {', '.join(recent)}", recent
    )


def list_sessions(project: Path) -> list[SessionSummary]:
    """Every session of `project`, the one active last first."""
    return [_summarize(session, activity) for activity, session in _by_activity(project)]


def _by_activity(project: Path) -> list[tuple[float, Session]]:
    project = project.expanduser().resolve()
    parent = project_dir(project)
    try:
        entries = list(os.scandir(parent))
    except FileNotFoundError:
        return []
    found: list[tuple[float, Session]] = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        session = Session(entry.name, project, Path(entry.path))
        try:
            activity = session.transcript_path.stat().st_mtime
        except FileNotFoundError:
            if not session.meta_path.exists():
                continue  # not a session: something else someone put here
            activity = _created_from_id(session.id) or 0.0
        found.append((activity, session))
    # Ties (same mtime granularity) go to the later id, i.e. the later created.
    found.sort(key=lambda pair: (pair[0], pair[1].id), reverse=True)
    return found


# --- meta.json -----------------------------------------------------------------------------


def read_meta(session: Session) -> SessionMeta:
    """What meta.json says; best guesses (and `problem`) when it is missing or broken."""
    guess = SessionMeta(
        id=session.id,
        project=str(session.project),
        created=_created_from_id(session.id) or _mtime(session.directory),
        version="",
        model="",
        title="",
    )
    try:
        data = json.loads(session.meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return replace(guess, problem=f"{session.meta_path} is missing")
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return replace(guess, problem=f"{session.meta_path} cannot be read: {error}")
    if not isinstance(data, dict):
        return replace(guess, problem=f"{session.meta_path} is not a JSON object")
    created = data.get("created")
    return SessionMeta(
        id=session.id,
        project=_text(data.get("project")) or guess.project,
        created=float(created) if isinstance(created, int | float) else guess.created,
        version=_text(data.get("version")),
        model=_text(data.get("model")),
        title=_text(data.get("title")),
        workspace=_text(data.get("workspace")),
    )


def set_title(session: Session, text: str) -> str:
    """Title the session with the first line of `text` (the first prompt); returns it."""
    title = title_from(text)
    meta = read_meta(session)
    _write_meta(session, replace(meta, title=title, problem=None))
    return title


def title_from(text: str) -> str:
    """The first non-blank line, cut to TITLE_CHARS characters."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def _write_meta(session: Session, meta: SessionMeta) -> None:
    data = {
        "id": meta.id,
        "project": meta.project,
        "created": meta.created,
        "version": meta.version,
        "model": meta.model,
        "title": meta.title,
    }
    if meta.workspace:
        data["workspace"] = meta.workspace
    _write_atomically(session.meta_path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _write_project_note(parent: Path, project: Path) -> None:
    # For a person browsing the data dir: which project a hashed folder belongs to.
    note = parent / "project.json"
    if not note.exists():
        with contextlib.suppress(OSError):
            _write_atomically(note, json.dumps({"path": str(project)}, ensure_ascii=False) + "\n")


def _write_atomically(path: Path, text: str) -> None:
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


# --- summaries -----------------------------------------------------------------------------


def _summarize(session: Session, activity: float) -> SessionSummary:
    meta = read_meta(session)
    counts = _scan(session.transcript_path, want_title=not meta.title)
    return SessionSummary(
        session=session,
        created=meta.created,
        last_activity=activity,
        title=meta.title or counts.title,
        model=meta.model,
        messages=counts.messages,
        turns=counts.turns,
        ended_cleanly=counts.last_type == "end",
    )


@dataclass(slots=True)
class _Counts:
    messages: int = 0
    turns: int = 0
    title: str = ""
    last_type: str | None = None


def _scan(path: Path, *, want_title: bool) -> _Counts:
    counts = _Counts()
    try:
        file = path.open("rb")
    except OSError:
        return counts
    with file:
        for line in file:
            kind: str | None
            if not line.endswith(b"\n"):
                # A record cut by a crash, unless it is whole (transcript.py reads it so too).
                record = _parse(line)
                if record is None:
                    break
                kind = _text(record.get("type"))
            else:
                kind = _record_type(line)
            if kind is None:
                continue  # garbled or blank: Transcript.records() skips it too
            counts.last_type = kind
            if kind == "turn":
                counts.turns += 1
            elif kind == "message":
                counts.messages += 1
                if want_title and counts.messages == 1:
                    counts.title = _prompt_title(line)
    return counts


def _record_type(line: bytes) -> str | None:
    if line.startswith(_TYPE_PREFIX):
        end = line.find(b'"', len(_TYPE_PREFIX))
        # What our writer produced ends with "}\n"; anything else gets parsed properly.
        if end != -1 and line.rstrip().endswith(b"}"):
            return line[len(_TYPE_PREFIX) : end].decode("ascii", errors="replace")
    # Written by something other than the record helpers: read it the slow way.
    record = _parse(line)
    return None if record is None else _text(record.get("type")) or ""


def _prompt_title(line: bytes) -> str:
    record = _parse(line)
    if record is None or record.get("role") != "user":
        return ""
    content = record.get("content")
    if isinstance(content, str):
        return title_from(content)
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                return title_from(_text(block.get("text")))
    return ""


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (UnicodeDecodeError, ValueError, RecursionError):  # nested past Python's depth
        return None
    return value if isinstance(value, dict) else None


def _created_from_id(session_id: str) -> float | None:
    if not _ID.fullmatch(session_id):
        return None
    moment = datetime.strptime(session_id[:15], _ID_TIME_FORMAT).replace(tzinfo=UTC)
    return moment.timestamp()


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
