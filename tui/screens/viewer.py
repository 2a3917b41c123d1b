"""`OutputViewerScreen`: one saved output, read through `FileView`, with search and go-to-line.

Why it is shaped this way:

- A full `Screen`, not a modal: the file deserves the whole terminal, and esc goes back to the
  list (or to wherever the viewer was opened from).
- One `Input` serves both prompts (`/` search and go-to-line); `prompt_kind` says which, so
  the keys and the status line read the same way in both cases. While it is open the
  printable keys belong to it; esc closes it before it closes the screen.
- The header names the file by its place in the session (`tool-results/<id>.txt`), not its
  absolute path, so it stays short and a snapshot of it does not depend on where the
  session lives.
- Follow mode starts on for a running command's spool; any jump elsewhere (home, a search
  match, a go-to) turns it off, because following would pull the view straight back.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from tui.viewer import SavedOutputEntry, human_size
from tui.viewer.file_view import FileView

PromptKind = Literal["search", "goto"]


class OutputViewerScreen(Screen[None]):
    """Shows one saved output; esc or q goes back."""

    CSS_PATH = "viewer.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("q", "back", "Back", show=False),
        Binding("slash", "prompt('search')", "Search"),
        Binding("n", "find_next", "Next match"),
        Binding("N", "find_previous", "Previous match"),
        Binding("g", "prompt('goto')", "Go to line"),
        Binding("ctrl+g", "prompt('goto')", "Go to line", show=False),
        Binding("colon", "prompt('goto')", "Go to line", show=False),
        Binding("f", "toggle_follow", "Follow"),
        Binding("home", "home", "Top"),
        Binding("end", "end", "Bottom"),
    ]

    def __init__(self, entry: SavedOutputEntry, *, refresh_interval: float = 0.5) -> None:
        super().__init__()
        self.entry = entry
        self.refresh_interval = refresh_interval
        self.prompt_kind: PromptKind | None = None
        self.last_pattern = ""

    def compose(self) -> ComposeResult:
        yield Static(self._header_text(None, False), id="viewer-header")
        yield FileView(
            self.entry.path,
            follow=self.entry.running,
            refresh_interval=self.refresh_interval,
            id="file-view",
        )
        yield Input(id="viewer-input")
        yield Static("", id="viewer-status")
        yield Footer()

    def on_mount(self) -> None:
        self.file_view.focus()
        self._show_status(self._follow_note())

    @property
    def file_view(self) -> FileView:
        return self.query_one("#file-view", FileView)

    @property
    def prompt(self) -> Input:
        return self.query_one("#viewer-input", Input)

    # -- header and status ------------------------------------------------------------------

    def _header_text(self, lines: int | None, complete: bool) -> str:
        parts = [self.entry.tool_name]
        if self.entry.summary:
            parts.append(self.entry.summary)
        parts += [self.entry.short_path, human_size(self.entry.size_bytes)]
        if lines is not None:
            known = f"{lines:,}" if complete else f"{lines:,}+"
            parts.append(f"{known} line{'' if lines == 1 and complete else 's'}")
        return "  ·  ".join(parts)

    def _show_status(self, text: str) -> None:
        self.query_one("#viewer-status", Static).update(text)

    def _follow_note(self) -> str:
        return "following (f to stop)" if self.file_view.following else ""

    @on(FileView.IndexAdvanced)
    def _index_advanced(self, event: FileView.IndexAdvanced) -> None:
        header = self._header_text(event.line_count, event.complete)
        if self.file_view.index is not None and self.file_view.index.size != self.entry.size_bytes:
            header = header.replace(
                human_size(self.entry.size_bytes), human_size(self.file_view.index.size)
            )
        self.query_one("#viewer-header", Static).update(header)

    @on(FileView.SearchFinished)
    def _search_finished(self, event: FileView.SearchFinished) -> None:
        if event.line is None:
            self._show_status(f"no match for “{event.pattern}”")
        else:
            self._show_status(f"match {event.ordinal or 1:,} at line {event.line + 1:,}")

    # -- prompts ----------------------------------------------------------------------------

    def action_prompt(self, kind: PromptKind) -> None:
        self.prompt_kind = kind
        prompt = self.prompt
        prompt.placeholder = "search for (literal, any case)" if kind == "search" else "line"
        prompt.value = self.last_pattern if kind == "search" else ""
        prompt.type = "text" if kind == "search" else "integer"
        prompt.add_class("-open")
        prompt.focus()

    def _close_prompt(self) -> None:
        self.prompt_kind = None
        self.prompt.remove_class("-open")
        self.file_view.focus()

    @on(Input.Submitted, "#viewer-input")
    def _prompt_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        kind, value = self.prompt_kind, event.value.strip()
        self._close_prompt()
        if not value:
            return
        if kind == "search":
            self.last_pattern = value
            self.file_view.following = False
            self._show_status(f"searching for “{value}”…")
            self.file_view.find(value)
        elif kind == "goto":
            try:
                wanted = int(value)
            except ValueError:
                self._show_status(f"not a line number: {value}")
                return
            self.file_view.following = False
            shown = self.file_view.go_to_line(wanted - 1)
            self._show_status(f"line {shown + 1:,}")

    # -- actions ----------------------------------------------------------------------------

    def action_back(self) -> None:
        if self.prompt_kind is not None:
            self._close_prompt()
            return
        self.dismiss(None)

    def _find(self, *, backwards: bool) -> None:
        if not self.last_pattern:
            self._show_status("nothing to find yet: press / to search")
            return
        self.file_view.following = False
        self.file_view.find(self.last_pattern, backwards=backwards)

    def action_find_next(self) -> None:
        self._find(backwards=False)

    def action_find_previous(self) -> None:
        self._find(backwards=True)

    def action_toggle_follow(self) -> None:
        view = self.file_view
        view.following = not view.following
        self._show_status(self._follow_note() or "stopped following")

    def action_home(self) -> None:
        self.file_view.following = False
        self.file_view.scroll_home(animate=False)

    def action_end(self) -> None:
        self.file_view.scroll_end(animate=False)
