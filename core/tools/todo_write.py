"""TodoWrite: the agent's task list, replaced whole on every call.

One tool that replaces the entire list, rather than create/update/delete tools, so the list
the user sees is always exactly the list the model last wrote: there is no partial update to
go wrong and no id scheme for the model to keep straight. The cost is resending the list.

The list lives in the app state as a tuple of frozen `Todo` values (so a subscriber can
compare old and new by value), and a `TodosChanged` event tells the front end to redraw it.

Two choices worth knowing:
- TodoWrite is *read-only*: it changes proctor's own state and nothing in the project, so
  plan mode and default mode let it run without asking. It is *not* concurrency-safe: two
  calls in one turn replace the same shared list, and the later one must win in call order.
- `activeForm` is required (the seed has it optional in one place): the UI shows it while a
  task is in progress, and a list that sometimes has it and sometimes not renders badly.
  More than one task in progress, or a blank field, is refused with the list left as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import ConfigDict, Field

from ..app_state import AppState, Updater
from ..events import TodosChanged
from ..tool import (
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolResult,
    ValidationResult,
)

TodoStatus = Literal["pending", "in_progress", "completed"]


@dataclass(frozen=True, slots=True)
class Todo:
    """One task as the app state and the UI hold it."""

    content: str
    """What to do, imperative: "Run the tests"."""
    status: TodoStatus
    active_form: str
    """The same, as it is being done: "Running the tests"."""


class TodoItemInput(ToolInput):
    # populate_by_name: the engine re-validates inputs it dumped by field name.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    content: str = Field(
        min_length=1, description='The task, in the imperative: "Fix the login redirect".'
    )
    status: TodoStatus = Field(description="pending, in_progress or completed.")
    active_form: str = Field(
        alias="activeForm",
        min_length=1,
        description='The task as it is being done, shown while in progress: "Fixing the login '
        'redirect".',
    )


class TodoWriteInput(ToolInput):
    todos: list[TodoItemInput] = Field(
        description="The complete, updated list. It replaces the previous list entirely."
    )


@dataclass(frozen=True, slots=True)
class TodoWriteOutput:
    old_todos: tuple[Todo, ...]
    new_todos: tuple[Todo, ...]


PROMPT = """\
Keep a task list for the current piece of work, visible to the user as you go. Each call \
replaces the whole list: always send every task, with its current status.

Use it when:
- the work has three or more distinct steps, or needs planning;
- the user gives you several things to do, or asks you to keep a list;
- new requirements arrive: capture them as tasks right away;
- you start a task (mark it in_progress before you begin) or finish one (mark it completed \
at once, not in a batch later, and add any follow-up tasks you found).

Skip it for a single simple task, for work of fewer than three trivial steps, and for \
questions that need only an answer.

Each task has:
- content: what to do, in the imperative ("Run the tests");
- status: pending, in_progress or completed;
- activeForm: the same as it is being done ("Running the tests"), shown while in progress.

At most one task may be in_progress at a time. Mark a task completed only when it is fully \
done: if tests fail, the work is partial or you are blocked, keep it in_progress and add a \
task for what is in the way."""


class TodoWrite(Tool[TodoWriteInput, TodoWriteOutput]):
    name = "TodoWrite"
    search_hint = "task list todo progress tracking plan steps"
    input_model = TodoWriteInput
    description = "Replaces the agent's task list, shown to the user."

    instructions = PROMPT

    def is_read_only(self, input: TodoWriteInput) -> bool:
        return True  # proctor's own state only; the project is untouched

    def summarize_input(self, input: TodoWriteInput) -> str:
        doing = next((t.active_form for t in input.todos if t.status == "in_progress"), None)
        count = f"{len(input.todos)} task{'s' if len(input.todos) != 1 else ''}"
        return f"{count}, {doing}" if doing else count

    def is_concurrency_safe(self, input: TodoWriteInput) -> bool:
        return False  # replaces shared state: calls must apply in order

    async def validate_input(self, input: TodoWriteInput, context: ToolContext) -> ValidationResult:
        problem = list_problem(input)
        return ValidationResult.failed(problem) if problem else ValidationResult.passed()

    async def call(
        self, input: TodoWriteInput, context: ToolContext, progress: Progress
    ) -> ToolResult[TodoWriteOutput]:
        problem = list_problem(input)  # `call` may be reached without `validate_input`
        if problem:
            return ToolResult(problem, is_error=True)
        new = tuple(Todo(t.content, t.status, t.active_form) for t in input.todos)
        old = context.get_app_state().todos
        context.set_app_state(_replace_todos(new))
        context.emit(TodosChanged(todos=new, agent_id=context.agent_id))
        return ToolResult(TodoWriteOutput(tuple(_todos_only(old)), new))

    def hook_response(self, input: TodoWriteInput, data: Any) -> Any:
        if not isinstance(data, TodoWriteOutput):
            return data
        return {
            "oldTodos": [_as_sent(todo) for todo in data.old_todos],
            "newTodos": [_as_sent(todo) for todo in data.new_todos],
        }

    def render(self, output: TodoWriteOutput) -> ToolContent:
        return render(output.new_todos)


def _as_sent(todo: Todo) -> dict[str, str]:
    """A task with the field names the model sends (`activeForm`)."""
    return {"content": todo.content, "status": todo.status, "activeForm": todo.active_form}


def list_problem(input: TodoWriteInput) -> str | None:
    """Why this list cannot be the new list, or None."""
    for number, todo in enumerate(input.todos, start=1):
        if not todo.content.strip():
            return f"Task {number} has no content. Give every task a short imperative title."
        if not todo.active_form.strip():
            return (
                f"Task {number} ({todo.content!r}) has an empty activeForm. Give the task as it "
                'is being done, e.g. "Running the tests".'
            )
    active = [t.content for t in input.todos if t.status == "in_progress"]
    if len(active) > 1:
        listed = ", ".join(repr(a) for a in active)
        return (
            f"{len(active)} tasks are in_progress ({listed}); at most one may be. Keep the one "
            "you are working on in_progress and mark the others pending or completed. The "
            "list was not changed."
        )
    return None


def render(todos: tuple[Todo, ...]) -> str:
    if not todos:
        return "The task list is now empty."
    counts = {s: sum(1 for t in todos if t.status == s) for s in ("completed", "in_progress")}
    pending = len(todos) - counts["completed"] - counts["in_progress"]
    text = (
        f"Task list updated: {len(todos)} task{'s' if len(todos) != 1 else ''} "
        f"({counts['completed']} completed, {counts['in_progress']} in progress, "
        f"{pending} pending)."
    )
    current = next((t for t in todos if t.status == "in_progress"), None)
    if current is not None:
        text += f" Now: {current.active_form}."
    elif pending:
        text += " Mark the next task in_progress when you start it."
    return text + " Keep the list up to date as you work."


def _replace_todos(todos: tuple[Todo, ...]) -> Updater:
    def updater(state: AppState) -> AppState:
        return replace(state, todos=todos)

    return updater


def _todos_only(values: tuple[object, ...]) -> list[Todo]:
    # AppState.todos is typed loosely (Any); keep only values this module understands.
    return [v for v in values if isinstance(v, Todo)]
