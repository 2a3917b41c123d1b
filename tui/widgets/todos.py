"""The agent's todo list, as the last TodoWrite left it.

TodoWrite replaces the whole list every time, so this widget keeps the latest tuple per agent
and redraws only when a `TodosChanged` arrives (or a sub-agent's list goes away): a batch of
a thousand tool events that holds no todo change costs one `isinstance` each and no redraw.
The list is short (a handful of lines), so it is drawn as one Rich `Text` from `render()`
rather than a Line-API widget; Textual wraps and sizes it (`height: auto`).

Sub-agents keep lists of their own (`TodosChanged.agent_id` is their Task call's id). The
main agent's list comes first; each running sub-agent's non-empty list follows under a small
heading naming its Task call, and disappears when that call finishes, since a finished
sub-agent's plan is no longer something to watch. The border title counts the main list only
("Todos 2/5"): it answers "how far along is the work I asked for".

Colours come from component classes styled with theme variables, so themes decide them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from core.events import EngineEvent, TodosChanged, ToolCancelled, ToolCompleted
from tui.calls import CallBook

EMPTY_TEXT = "No todos yet"
MARKS: dict[str, str] = {"pending": "○", "in_progress": "◐", "completed": "✓"}


def todo_field(todo: Any, name: str, default: str = "") -> str:
    """A field of a todo item; items are `core.tools.todo_write.Todo`, but fail soft on others."""
    value = getattr(todo, name, None)
    if value is None and isinstance(todo, dict):
        value = todo.get(name)
    return default if value is None else str(value)


class TodoList(Widget, can_focus=False):
    """The main agent's todo list, followed by those of running sub-agents."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "todo-list--pending",
        "todo-list--in-progress",
        "todo-list--completed",
        "todo-list--heading",
        "todo-list--empty",
    }

    DEFAULT_CSS = """
    TodoList {
        height: auto;
        max-height: 50%;
        border: round $primary-muted;
        border-title-color: $text-muted;
        padding: 0 1;
        background: $surface;
    }
    TodoList > .todo-list--pending { color: $text; }
    TodoList > .todo-list--in-progress { color: $tool-running; text-style: bold; }
    TodoList > .todo-list--completed { color: $text-muted; text-style: strike; }
    TodoList > .todo-list--heading { color: $text-muted; text-style: italic; }
    TodoList > .todo-list--empty { color: $text-muted; text-style: italic; }
    """

    show_sub_agents: reactive[bool] = reactive(True)
    """Whether running sub-agents' lists are shown under the main one (the app may bind a key;
    the list itself never takes focus, so it has no bindings of its own)."""

    class Changed(Message):
        """The main agent's list changed (posted after it is redrawn)."""

        def __init__(self, todo_list: TodoList, completed: int, total: int) -> None:
            super().__init__()
            self.todo_list = todo_list
            self.completed = completed
            self.total = total

        @property
        def control(self) -> TodoList:
            return self.todo_list

    def __init__(
        self,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.todos: tuple[Any, ...] = ()
        self.sub_agent_todos: dict[str, tuple[Any, ...]] = {}
        """Lists of running sub-agents, by their Task call's id, in the order first seen."""
        self._sub_agent_labels: dict[str, str] = {}
        self._update_title()

    # -- feeding ---------------------------------------------------------------------------------

    def apply(self, events: Sequence[EngineEvent], book: CallBook) -> None:
        """Take a batch of engine events; redraws once, and only if a list changed."""
        main_changed = False
        changed = False
        for event in events:
            if isinstance(event, TodosChanged):
                if event.agent_id is None:
                    self.todos = tuple(event.todos)
                    main_changed = True
                else:
                    self._set_sub_agent_list(event.agent_id, tuple(event.todos), book)
                changed = True
            elif (
                isinstance(event, ToolCompleted | ToolCancelled)
                and event.tool_use_id in self.sub_agent_todos
            ):
                del self.sub_agent_todos[event.tool_use_id]
                changed = True
        if main_changed:
            self._update_title()
            done = sum(todo_field(t, "status") == "completed" for t in self.todos)
            self.post_message(self.Changed(self, done, len(self.todos)))
        if changed:
            self.refresh(layout=True)

    def _set_sub_agent_list(self, agent_id: str, todos: tuple[Any, ...], book: CallBook) -> None:
        task = book.calls.get(agent_id)
        if task is not None and task.finished:
            return  # a late event from a sub-agent that has already ended
        if not todos:
            self.sub_agent_todos.pop(agent_id, None)
            return
        self.sub_agent_todos[agent_id] = todos
        if agent_id not in self._sub_agent_labels:
            summary = task.summary if task is not None and task.summary else ""
            self._sub_agent_labels[agent_id] = summary or "sub-agent"

    def _update_title(self) -> None:
        done = sum(todo_field(t, "status") == "completed" for t in self.todos)
        self.border_title = f"Todos {done}/{len(self.todos)}" if self.todos else "Todos"

    def watch_show_sub_agents(self) -> None:
        self.refresh(layout=True)

    # -- drawing ---------------------------------------------------------------------------------

    def render(self) -> Text:
        text = Text(no_wrap=False, overflow="fold")
        if not self.todos and not (self.show_sub_agents and self.sub_agent_todos):
            text.append(EMPTY_TEXT, self.get_component_rich_style("todo-list--empty"))
            return text
        styles = {
            "pending": self.get_component_rich_style("todo-list--pending"),
            "in_progress": self.get_component_rich_style("todo-list--in-progress"),
            "completed": self.get_component_rich_style("todo-list--completed"),
        }
        lines: list[Text] = [self._item_line(todo, styles) for todo in self.todos]
        if self.show_sub_agents:
            heading = self.get_component_rich_style("todo-list--heading")
            for agent_id, todos in self.sub_agent_todos.items():
                lines.append(
                    Text(f"↳ {self._sub_agent_labels.get(agent_id, 'sub-agent')}", heading)
                )
                lines.extend(self._item_line(todo, styles, indent="  ") for todo in todos)
        return Text("\n").join(lines)

    @staticmethod
    def _item_line(todo: Any, styles: dict[str, Style], indent: str = "") -> Text:
        status = todo_field(todo, "status", "pending")
        if status not in MARKS:
            status = "pending"
        content = todo_field(todo, "content")
        words = (todo_field(todo, "active_form") or content) if status == "in_progress" else content
        return Text(f"{indent}{MARKS[status]} {words}", styles[status])
