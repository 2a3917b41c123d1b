"""Sessions on disk: transcripts that survive crashes, resume, listing and finding sessions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.access.decision import DecidedBy
from core.agent.sessions import (
    SessionNotFound,
    create_session,
    data_dir,
    find_session,
    latest_session,
    list_sessions,
    project_dir,
    read_meta,
    remove_unused,
    set_title,
)
from core.agent.transcript import Transcript, belongs_in_transcript
from core.agent.transcript_records import (
    PROGRESS_STRING_CAP,
    end_record,
    event_record,
    message_record,
    turn_record,
)
from core.agent.transcript_resume import INTERRUPTED_RESULT, messages_from
from core.events import (
    HookRan,
    ModeChanged,
    PermissionAnswered,
    PermissionAsked,
    ResultPersisted,
    TodosChanged,
    ToolCancelled,
    ToolCompleted,
    ToolNotice,
    ToolProgress,
    ToolQueued,
    ToolStarted,
    wall_time,
)
from core.hooks import PreToolUseOutcome
from core.ports import Approve, PermissionRequest, Reject


@dataclass(frozen=True)
class Todo:
    content: str
    status: str
    active_form: str


ROOT = Path(__file__).resolve().parents[3]
CALL = {"tool_use_id": "toolu_1", "tool_name": "Bash", "batch_id": "b1"}


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "data"
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(home))
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "work" / "app"
    path.mkdir(parents=True)
    return path


def read_all(transcript: Transcript) -> list[dict[str, Any]]:
    return list(transcript.records())


# --- the transcript file -------------------------------------------------------------------


def test_messages_and_events_round_trip(tmp_path: Path) -> None:
    request = PermissionRequest(
        tool_use_id="toolu_1",
        tool_name="Bash",
        input={"command": "rm -rf build"},
        summary="rm -rf build",
        message="rm deletes files",
        decided_by=DecidedBy("rule", "the ask rule Bash(rm:*)"),
        suggestions=("Bash(rm:*)",),
    )
    events = [
        ToolQueued(input={"command": "ls"}, summary="ls", concurrency_safe=True, **CALL),
        ToolStarted(**CALL),
        ToolProgress(data={"kind": "output", "text": "a\n", "total_bytes": 2}, **CALL),
        PermissionAsked(request=request, **CALL),
        PermissionAnswered(answer=Approve(scope="session", rule="Bash(rm:*)"), **CALL),
        PermissionAnswered(answer=Reject(feedback="use git clean"), **CALL),
        ResultPersisted(path=Path("/tmp/r.txt"), size_chars=60_000, **CALL),
        ToolNotice(level="warning", text="hook failed", **CALL),
        ToolCompleted(duration_s=0.5, is_error=True, failed_stage="call", **CALL),
        ToolCancelled(reason="user_interrupted", message="interrupted", **CALL),
        TodosChanged(todos=(Todo("Run tests", "pending", "Running tests"),)),
        ModeChanged(mode="plan", previous="default", why="the mode key"),
    ]
    written: list[dict[str, Any]] = [
        message_record("user", "list the files"),
        message_record(
            "assistant",
            [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}],
            model="claude-x",
            stop_reason="tool_use",
            usage={"input_tokens": 10, "output_tokens": 5},
        ),
        *(event_record(event) for event in events),
        event_record(
            HookRan(
                hook_event="PreToolUse",
                outcome=PreToolUseOutcome(permission="ask"),
                tool_use_id="toolu_1",
                tool_name="Bash",
            )
        ),
        turn_record(1, stop_reason="end_turn", duration_s=1.5),
        end_record("quit"),
    ]
    with Transcript(tmp_path / "t.jsonl") as transcript:
        for record in written:
            assert transcript.append(record)
    reader = Transcript(tmp_path / "t.jsonl")
    assert read_all(reader) == written
    assert reader.problems == []

    by_kind = {r["kind"]: r for r in written if r["type"] == "tool_event"}
    queued = by_kind["queued"]
    assert queued["tool_use_id"] == "toolu_1" and queued["name"] == "Bash"
    assert queued["timestamp"] == wall_time(events[0].at)
    assert isinstance(queued["timestamp"], float)
    assert queued["input"] == {"command": "ls"}
    completed = by_kind["completed"]
    assert (completed["duration_s"], completed["is_error"], completed["failed_stage"]) == (
        0.5,
        True,
        "call",
    )
    assert by_kind["cancelled"]["reason"] == "user_interrupted"
    assert by_kind["persisted"]["path"] == "/tmp/r.txt"
    assert by_kind["permission_asked"]["decided_by"]["kind"] == "rule"
    assert by_kind["permission_asked"]["suggestions"] == ["Bash(rm:*)"]
    answers = [r for r in written if r.get("kind") == "permission_answered"]
    assert [(a["answer"], a["scope"], a["feedback"]) for a in answers] == [
        ("approve", "session", None),
        ("reject", None, "use git clean"),
    ]
    others = {r["kind"]: r for r in written if r["type"] == "engine_event"}
    assert others["todos"]["todos"][0]["active_form"] == "Running tests"
    assert others["mode"]["mode"] == "plan"
    assert "tool_use_id" not in others["mode"]
    hook = others["hook"]  # a tool's hooks say which call they were about
    assert (hook["hook_event"], hook["tool_use_id"], hook["name"]) == (
        "PreToolUse",
        "toolu_1",
        "Bash",
    )
    assert hook["outcome"]["permission"] == "ask"


def test_progress_strings_are_capped_and_odd_values_made_json(tmp_path: Path) -> None:
    long = "x" * (PROGRESS_STRING_CAP * 3) + "END"
    progress = ToolProgress(data={"text": long, "raw": b"\xff", "n": 1.0}, **CALL)
    assert not belongs_in_transcript(progress)
    assert belongs_in_transcript(ToolStarted(**CALL))
    record = event_record(progress)
    text = record["data"]["text"]
    assert len(text) < PROGRESS_STRING_CAP + 40 and text.endswith("END")
    assert record["data"]["raw"] == "\ufffd"
    # NaN, sets and objects still make one valid JSON line.
    transcript = Transcript(tmp_path / "t.jsonl")
    assert transcript.append({"type": "x", "nan": float("nan"), "set": {1}, "obj": object()})
    assert transcript.append(message_record("user", "bad \udcff byte"))
    records = read_all(transcript)
    assert records[0]["nan"] == "nan" and records[0]["set"] == [1]
    assert records[1]["content"] == "bad \udcff byte"
    assert transcript.problems == []


def test_a_cut_last_line_is_ignored_then_repaired_before_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with Transcript(path) as transcript:
        transcript.append(message_record("user", "one"))
        transcript.append(message_record("assistant", "two"))
    with path.open("ab") as file:
        file.write(b'{"type": "message", "role": "user", "cont')

    reader = Transcript(path)
    assert [r["content"] for r in read_all(reader)] == ["one", "two"]
    assert [p.kind for p in reader.problems] == ["cut"]

    writer = Transcript(path)
    writer.append(message_record("user", "three"))
    writer.close()
    assert [r["content"] for r in read_all(reader)] == ["one", "two", "three"]
    assert reader.problems == []


def test_a_whole_last_record_missing_its_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"type": "message", "role": "user", "content": "one"}')
    transcript = Transcript(path)
    assert transcript.repair() == "added the newline a whole last record was missing"
    transcript.append(message_record("user", "two"))
    assert [r["content"] for r in read_all(transcript)] == ["one", "two"]


def test_a_garbled_middle_line_is_skipped_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [
        json.dumps(message_record("user", "one")),
        '{"type": "message", "role": "us',
        "[1, 2]",
        "",
        json.dumps(message_record("assistant", "two")),
    ]
    path.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff\xfe\n")
    transcript = Transcript(path)
    assert [r["content"] for r in read_all(transcript)] == ["one", "two"]
    assert [(p.line, p.kind) for p in transcript.problems] == [
        (2, "garbled"),
        (3, "garbled"),
        (6, "garbled"),
    ]
    assert "not an object" in str(transcript.problems[1])


def test_a_line_nested_past_pythons_depth_is_garbled_not_a_crash(tmp_path: Path) -> None:
    """`[[[[…` a hundred thousand deep is valid-looking JSON that Python cannot parse: once
    it made resuming (and listing) the session raise RecursionError."""
    from core.agent.sessions import create_session, list_sessions

    path = tmp_path / "t.jsonl"
    lines = [json.dumps(message_record("user", "one")), "[" * 100_000 + "]" * 100_000]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    transcript = Transcript(path)
    assert [r["content"] for r in read_all(transcript)] == ["one"]
    assert [(p.line, p.kind) for p in transcript.problems] == [(2, "garbled")]

    session = create_session(tmp_path / "project")
    session.transcript_path.write_text("[" * 100_000 + "\n", encoding="utf-8")
    assert [s.session.id for s in list_sessions(tmp_path / "project")] == [session.id]


def test_a_missing_transcript_reads_as_empty(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path / "nothing.jsonl")
    assert read_all(transcript) == [] and transcript.repair() is None


def test_a_failed_write_is_reported_not_raised(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    transcript = Transcript(blocked / "t.jsonl")
    assert transcript.append(message_record("user", "x")) is False
    assert transcript.error is not None and "could not be written" in transcript.error


CHILD = """
import sys
from dataclasses import dataclass
from pathlib import Path
from core.agent.sessions import create_session
from core.agent.transcript_records import message_record

session = create_session(Path(sys.argv[1]), model="m")
transcript = session.transcript()
i = 0
while True:
    role = "user" if i % 2 == 0 else "assistant"
    transcript.append(message_record(role, f"r{i} " + "x" * (i % 700)))
    i += 1
    if i == 300:
        print(session.id, flush=True)
"""


def test_a_session_killed_with_sigkill_resumes(project: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(project)],
        stdout=subprocess.PIPE,
        env=env,
        cwd=ROOT,
        text=True,
    )
    try:
        assert child.stdout is not None
        session_id = child.stdout.readline().strip()
        assert session_id, "the child never became ready"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL

    session = latest_session(project)
    assert session is not None and session.id == session_id
    transcript = session.transcript()
    records = read_all(transcript)
    assert len(records) >= 300
    assert [r["content"].split()[0] for r in records] == [f"r{i}" for i in range(len(records))]
    assert all(p.kind == "cut" for p in transcript.problems)

    transcript.append(message_record("user", "after the crash"))
    transcript.close()
    again = read_all(transcript)
    assert len(again) == len(records) + 1 and again[-1]["content"] == "after the crash"
    assert transcript.problems == []
    summary = list_sessions(project)[0]
    assert summary.messages == len(again) and not summary.ended_cleanly


# --- rebuilding the conversation ------------------------------------------------------------


def use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {}}


def result(tool_id: str, text: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": text}


def interrupted(tool_id: str) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": tool_id,
        "content": INTERRUPTED_RESULT,
        "is_error": True,
    }


def test_messages_from_keeps_a_valid_conversation_unchanged() -> None:
    records = [
        message_record("user", "hi"),
        message_record("assistant", [{"type": "text", "text": "on it"}, use("a")]),
        event_record(ToolStarted(**CALL)),
        message_record("user", [result("a")]),
        message_record("assistant", "done"),
        turn_record(1, stop_reason="end_turn"),
    ]
    assert messages_from(records) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "on it"}, use("a")]},
        {"role": "user", "content": [result("a")]},
        {"role": "assistant", "content": "done"},
    ]


def test_messages_from_answers_calls_a_crash_left_dangling() -> None:
    records = [message_record("user", "hi"), message_record("assistant", [use("a"), use("b")])]
    assert messages_from(records)[-1] == {
        "role": "user",
        "content": [interrupted("a"), interrupted("b")],
    }


def test_messages_from_repairs_a_prompt_sent_after_dangling_calls() -> None:
    records = [
        message_record("user", "hi"),
        message_record("assistant", [use("a"), use("b")]),
        message_record("user", [result("b"), result("zz")]),  # half the results, one orphan
        message_record("user", "carry on"),  # the prompt typed after resuming
    ]
    assert messages_from(records) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [use("a"), use("b")]},
        {
            "role": "user",
            "content": [interrupted("a"), result("b"), {"type": "text", "text": "carry on"}],
        },
    ]


def test_messages_from_merges_a_prompt_that_never_got_an_answer() -> None:
    records = [message_record("user", "first"), message_record("user", "second")]
    assert messages_from(records) == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        }
    ]


# --- sessions ------------------------------------------------------------------------------


def test_the_data_dir_comes_from_the_environment(data_home: Path, project: Path) -> None:
    assert data_dir() == data_home
    session = create_session(project, model="claude-x")
    assert session.directory.parent == project_dir(project)
    assert session.directory.is_relative_to(data_home / "projects")
    assert session.transcript_path == session.directory / "transcript.jsonl"
    assert session.audit_path.name == "audit.jsonl" and session.plan_path.name == "plan.md"
    assert session.results_dir.name == "tool-results"
    meta = read_meta(session)
    assert (meta.id, meta.project, meta.model, meta.problem) == (
        session.id,
        str(project.resolve()),
        "claude-x",
        None,
    )


def test_projects_with_the_same_folder_name_do_not_share_sessions(tmp_path: Path) -> None:
    one, two = tmp_path / "a" / "app", tmp_path / "b" / "app"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    assert project_dir(one) != project_dir(two)
    assert project_dir(one).name.startswith("app-")
    create_session(one)
    assert latest_session(two) is None and list_sessions(two) == []


def touch(session_path: Path, mtime: float) -> None:
    os.utime(session_path, (mtime, mtime))


def test_sessions_are_listed_last_active_first(project: Path) -> None:
    first, second, third = (create_session(project) for _ in range(3))
    touch(first.transcript_path, 3_000)
    touch(second.transcript_path, 1_000)
    touch(third.transcript_path, 2_000)
    assert [s.id for s in list_sessions(project)] == [first.id, third.id, second.id]
    assert latest_session(project) == first


def test_a_summary_counts_messages_and_turns_and_sees_a_clean_end(project: Path) -> None:
    session = create_session(project)
    with session.transcript() as transcript:
        transcript.append(message_record("user", "Fix the build\nit fails on CI"))
        transcript.append(event_record(ToolStarted(**CALL)))
        transcript.append(message_record("assistant", "done"))
        transcript.append(turn_record(1, stop_reason="end_turn"))
        transcript.append(end_record("quit"))
    (summary,) = list_sessions(project)
    assert (summary.id, summary.messages, summary.turns, summary.ended_cleanly) == (
        session.id,
        2,
        1,
        True,
    )
    assert summary.title == "Fix the build"  # from the transcript: no title was set
    assert set_title(session, "Make CI green\nplease") == "Make CI green"
    assert list_sessions(project)[0].title == "Make CI green"


def test_a_session_with_a_broken_meta_file_is_still_listed(project: Path) -> None:
    session = create_session(project)
    session.meta_path.write_text("{not json")
    (summary,) = list_sessions(project)
    assert summary.id == session.id
    assert read_meta(session).problem is not None
    assert summary.created > 0


def test_find_session_by_id_or_unique_prefix(project: Path) -> None:
    made = [create_session(project) for _ in range(3)]
    for session in made:
        assert find_session(project, session.id) == session
        assert find_session(project, f" {session.id} ") == session
    target = made[0]
    unique = next(
        target.id[:n]
        for n in range(1, len(target.id) + 1)
        if sum(s.id.startswith(target.id[:n]) for s in made) == 1
    )
    assert find_session(project, unique) == target


def test_find_session_explains_unknown_and_ambiguous_ids(project: Path) -> None:
    with pytest.raises(SessionNotFound, match="no sessions"):
        find_session(project, "2026")
    made = [create_session(project) for _ in range(2)]
    a, b = made[0].id, made[1].id
    common = a[: next(n for n in range(len(a)) if a[n] != b[n])]
    with pytest.raises(SessionNotFound, match="give more of the id") as ambiguous:
        find_session(project, common)
    assert set(ambiguous.value.candidates) == {s.id for s in made}
    with pytest.raises(SessionNotFound, match="recent sessions") as unknown:
        find_session(project, "nope")
    assert set(unknown.value.candidates) == {s.id for s in made}
    with pytest.raises(SessionNotFound):
        find_session(project, "../x")


def test_an_unused_session_is_removed_and_a_used_one_is_kept(project: Path):
    unused, used = create_session(project), create_session(project)
    used.transcript_path.write_text('{"type": "user"}\n')
    remove_unused(unused)
    remove_unused(used)
    assert not unused.directory.exists()
    assert used.directory.exists() and used.transcript_path.read_text()
    assert [s.id for s in list_sessions(project)] == [used.id]
