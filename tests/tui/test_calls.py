"""The call book: what state each call is in, how calls group into batches, turns and agents."""

from __future__ import annotations

from pathlib import Path

from core.access.decision import DecidedBy
from core.events import (
    OutputProgress,
    PermissionAnswered,
    PermissionAsked,
    ResultPersisted,
    ToolCancelled,
    ToolCompleted,
    ToolNotice,
    ToolProgress,
    ToolQueued,
    ToolStarted,
)
from core.ports import Approve, PermissionRequest, Reject
from tui.calls import CallBook


def queued(tool_id: str, batch: str, name: str = "Read", parent: str | None = None, at=0.0):
    return ToolQueued(
        at=at,
        tool_use_id=tool_id,
        tool_name=name,
        batch_id=batch,
        parent_tool_use_id=parent,
        input={"file_path": f"/{tool_id}"},
        summary=f"/{tool_id}",
        concurrency_safe=name != "Bash",
    )


def ids(tool_id: str, name: str = "Read", batch: str = "b1") -> dict[str, str]:
    return {"tool_use_id": tool_id, "tool_name": name, "batch_id": batch}


def test_calls_that_share_a_batch_are_grouped_and_serial_calls_stand_alone():
    book = CallBook()
    book.begin_turn("look around", at=0.0)
    for tool_id in ("a", "b", "c"):
        book.apply(queued(tool_id, "b1"))
    book.apply(queued("d", "b2", name="Bash"))
    turn = book.current_turn
    assert turn is not None
    assert [b.calls for b in turn.batches] == [["a", "b", "c"], ["d"]]
    assert [b.parallel for b in turn.batches] == [True, False]


def test_a_call_walks_through_its_states_and_keeps_its_duration():
    book = CallBook()
    book.apply(queued("a", "b1", at=1.0))
    record = book.calls["a"]
    assert record.state == "queued" and record.elapsed(now=5.0) == 0.0
    book.apply(ToolStarted(at=2.0, **ids("a")))
    assert record.state == "running" and record.elapsed(now=3.5) == 1.5
    request = PermissionRequest("a", "Read", {}, "/a", "why", DecidedBy("mode", "default"))
    book.apply(PermissionAsked(at=2.1, request=request, **ids("a")))
    assert record.state == "waiting"
    book.apply(PermissionAnswered(at=2.2, answer=Approve(), **ids("a")))
    assert record.state == "running"
    book.apply(ToolCompleted(at=4.0, duration_s=2.0, is_error=False, **ids("a")))
    assert record.state == "done" and record.elapsed(now=99.0) == 2.0


def test_failures_say_the_stage_and_cancellations_say_why():
    book = CallBook()
    book.apply(queued("a", "b1"))
    book.apply(queued("b", "b1"))
    book.apply(
        ToolCompleted(at=1.0, duration_s=0.5, is_error=True, failed_stage="call", **ids("a"))
    )
    book.apply(
        ToolCancelled(
            at=1.0, reason="sibling_error", message="a sibling Bash call failed", **ids("b")
        )
    )
    assert (book.calls["a"].state, book.calls["a"].why) == ("failed", "call")
    assert (book.calls["b"].state, book.calls["b"].why) == (
        "cancelled",
        "a sibling Bash call failed",
    )


def test_a_denied_call_is_denied_not_failed_and_its_wait_is_kept_apart():
    book = CallBook()
    book.begin_turn("clean up", at=0.0)
    book.apply(queued("a", "b1", name="Bash"))
    book.apply(ToolStarted(at=1.0, **ids("a", "Bash")))
    request = PermissionRequest("a", "Bash", {}, "rm -rf build", "why", DecidedBy("mode", "x"))
    book.apply(PermissionAsked(at=1.1, request=request, **ids("a", "Bash")))
    record = book.calls["a"]
    # while it waits, the wait grows and the call's own time does not
    assert round(record.waited(now=4.1), 3) == 3.0 and round(record.elapsed(now=4.1), 3) == 0.1
    book.apply(PermissionAnswered(at=7.3, answer=Reject(), **ids("a", "Bash")))
    book.apply(
        ToolCompleted(
            at=7.3,
            duration_s=0.1,
            waited_s=6.2,
            is_error=True,
            failed_stage="permission",
            outcome="denied",
            denied_by=DecidedBy("user", "the person said no"),
            content="<tool_use_error>The user doesn't want to proceed.</tool_use_error>",
            **ids("a", "Bash"),
        )
    )
    assert (record.state, record.why, record.finished) == ("denied", "you", True)
    assert (record.elapsed(now=99.0), record.waited_s) == (0.1, 6.2)
    assert record.result == "The user doesn't want to proceed."  # words, not the model's marks
    turn = book.end_turn("end_turn", at=8.0)
    assert turn is not None and book.summary(turn).describe() == "1 call · 1 denied · 8.0 s"


def test_who_denied_is_said_in_a_few_words():
    book = CallBook()
    deniers = {
        "rule": DecidedBy("rule", "the deny rule Bash(rm:*) in settings.json"),
        "mode": DecidedBy("mode", "plan mode"),
        "hook": DecidedBy("hook", "a PreToolUse hook"),
        "nobody": DecidedBy("default", "nobody was there to approve it"),
    }
    for name, by in deniers.items():
        book.apply(queued(name, "b1"))
        book.apply(
            ToolCompleted(
                duration_s=0.0, is_error=True, outcome="denied", denied_by=by, **ids(name)
            )
        )
    assert {name: book.calls[name].why for name in deniers} == {
        "rule": "a rule",
        "mode": "plan mode",
        "hook": "a hook",
        "nobody": "",
    }
    assert {book.calls[name].state for name in deniers} == {"denied"}


def test_progress_keeps_the_last_lines_the_size_and_the_spool(tmp_path: Path):
    book = CallBook()
    book.apply(queued("a", "b1", name="Bash"))
    spool = tmp_path / "1-cmd.txt"
    data = OutputProgress(text="1\n2\n\n3\n4\n", total_bytes=9, elapsed_s=0.1, spool=spool)
    book.apply(ToolProgress(data=data, **ids("a", "Bash")))
    record = book.calls["a"]
    assert record.tail == ("2", "3", "4") and record.output_bytes == 9 and record.spool == spool
    book.apply(ToolProgress(data={"another": "tool"}, **ids("a", "Bash")))  # ignored, no crash
    assert record.tail == ("2", "3", "4")


def test_persisted_results_notices_and_result_text_are_kept(tmp_path: Path):
    book = CallBook()
    book.apply(queued("a", "b1"))
    book.apply(ResultPersisted(path=tmp_path / "a.txt", size_chars=10**6, **ids("a")))
    book.apply(ToolNotice(level="warning", text="hook said hi", **ids("a")))
    book.apply(
        ToolCompleted(
            duration_s=0.1,
            is_error=False,
            content=[{"type": "text", "text": "x"}, {"type": "image", "source": {}}],
            **ids("a"),
        )
    )
    record = book.calls["a"]
    assert record.persisted == tmp_path / "a.txt" and record.persisted_chars == 10**6
    assert record.notices == [("warning", "hook said hi")]
    assert record.result == "x\n[image]"  # blocks the text cannot show are named


def test_a_sub_agents_calls_nest_under_its_task_call():
    book = CallBook()
    book.apply(queued("task", "b1", name="Task"))
    book.apply(queued("inner1", "s1", parent="task"))
    book.apply(queued("inner2", "s1", parent="task"))
    turn = book.current_turn
    assert turn is not None
    assert list(turn.call_ids()) == ["task"]
    assert book.calls["task"].children == ["inner1", "inner2"]
    assert book.calls["inner1"].parent == "task"


def test_calls_belong_to_their_turn_and_a_finished_turn_sums_up():
    book = CallBook()
    book.begin_turn("first", at=0.0)
    book.apply(queued("a", "b1"))
    book.apply(queued("b", "b1"))
    book.apply(ToolCompleted(at=1.0, duration_s=1.0, is_error=False, **ids("a")))
    book.apply(ToolCompleted(at=1.0, duration_s=1.0, is_error=True, **ids("b")))
    first = book.end_turn("end_turn", at=2.5)
    assert first is not None and first.finished
    assert book.summary(first).describe() == "2 calls · 1 done · 1 failed · 2.5 s"
    book.begin_turn("second", at=3.0)
    book.apply(queued("c", "b1"))  # the same batch id in a new turn is a new batch
    assert book.calls["c"].turn == 2
    assert [b.calls for b in book.turns[1].batches] == [["c"]]


def test_an_event_for_a_call_never_queued_still_shows_the_call():
    book = CallBook()
    book.apply(ToolStarted(**ids("ghost", "Bash")))
    assert book.calls["ghost"].state == "running"
    assert book.calls["ghost"].tool_name == "Bash"


def test_paths_inside_the_project_are_shown_relative(tmp_path: Path):
    book = CallBook(cwd=tmp_path)
    event = queued("a", "b1")
    event.summary = f"{tmp_path}/src/app.py"
    book.apply(event)
    assert book.calls["a"].summary == "src/app.py"


def test_durations_read_naturally():
    from tui.calls import format_duration

    assert [format_duration(s) for s in (0.0042, 0.5, 1.25, 75, 3725)] == [
        "4 ms",
        "500 ms",
        "1.2 s",
        "1m 15s",
        "1h 02m",
    ]


def test_a_result_naming_an_impossible_path_does_not_break_the_output_list(tmp_path: Path):
    from tui.saved_entries import saved_output_entries

    book = CallBook()
    book.apply(queued("a", "b1", name="Bash"))
    content = "<persisted-output>\nOutput too large (1 MB). Full output saved to: /tmp/a\x00b\n"
    book.apply(ToolCompleted(duration_s=0.1, is_error=False, content=content, **ids("a")))
    saved = tmp_path / "tool-results" / "b.txt"
    saved.parent.mkdir()
    saved.write_text("a real saved output\n")
    (entry,) = saved_output_entries(tmp_path, book)
    assert entry.path == saved


def test_an_error_reads_as_words_not_as_the_marks_the_model_gets():
    book = CallBook()
    book.apply(queued("a", "b1"))
    marked = "<tool_use_error>File does not exist.</tool_use_error>"
    book.apply(ToolCompleted(duration_s=0.1, is_error=True, content=marked, **ids("a")))
    assert book.calls["a"].result == "File does not exist."
    # the marks are dropped from a text block too, and around the words' own whitespace
    blocks = [{"type": "text", "text": "\n<tool_use_error>Denied by plan mode.</tool_use_error>\n"}]
    book.apply(queued("b", "b1"))
    book.apply(ToolCompleted(duration_s=0.1, is_error=True, content=blocks, **ids("b")))
    assert book.calls["b"].result == "Denied by plan mode."
