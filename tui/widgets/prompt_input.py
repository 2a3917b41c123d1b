"""The prompt line: type, press enter to send; up and down walk earlier prompts.

An `Input` rather than a `TextArea`: prompts to a supervised agent are mostly one line, enter
must send (a TextArea would take it for a newline), and Input already handles paste, word
movement and selection. Pasted multi-line text is kept as typed; the history file stores
each prompt as one JSON string per line so newlines inside a prompt survive.

History works like a shell's: up goes to the most recent prompt, then older ones; down goes
back and, past the newest, returns the draft that was being typed before up was first
pressed. Only the last `HISTORY_LIMIT` prompts are kept, and an immediate repeat is not
stored twice.

The history file is optional and best effort: an unreadable or garbled file (or a bad line in
one) means an empty (or shorter) history, and a failed write is logged, never raised, since
losing history must never lose the prompt being sent. Writes append one short line, which
is cheap enough for the message loop; the file is rewritten to the last `HISTORY_LIMIT`
prompts only when it has grown to twice that.

The widget does not queue prompts typed while the agent works: the app does (it knows when a
turn ends). It sets `busy` so the placeholder tells the person what will happen, and
`quit_armed` after a first ctrl+c on the empty prompt, so the prompt itself says that a
second one quits. A prompt cleared with ctrl+c joins the history (this session's, not the
file: it was never sent), so up brings it back.

Focusing the prompt never selects its text (Input's default): keys typed elsewhere are sent
here (the main screen), and the first of them must not replace a draft.

While the text is `/` and a name with no space yet, the matching slash commands are listed
above the prompt (`CommandHints`) and tab completes the first of them; otherwise tab moves
focus as usual. The app gives the prompt its `CommandRegistry` once the project's own
commands are read; until then the built-ins match.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input

from core.agent.commands import Command, CommandRegistry

from .command_hints import CommandHints

log = logging.getLogger(__name__)

HISTORY_LIMIT = 500
IDLE_PLACEHOLDER = "Ask the agent… (enter to send)"
BUSY_PLACEHOLDER = "Agent working — your prompt will be sent after this turn"
QUIT_PLACEHOLDER = "Press ctrl+c again to quit"


def load_history(path: Path, limit: int = HISTORY_LIMIT) -> list[str]:
    """The prompts stored in `path`, oldest first; anything unreadable is left out."""
    import json  # here, not at the top: the first frame has no history to read

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError, ValueError):
        return []
    prompts: list[str] = []
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, str) and value.strip():
            prompts.append(value)
    return prompts[-limit:]


class PromptInput(Input):
    """A one-line prompt editor with history; enter posts `PromptSent`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "history_previous", "Previous prompt", show=False),
        Binding("down", "history_next", "Next prompt", show=False),
        Binding("tab", "complete_command", "Complete", show=False),
    ]

    busy: reactive[bool] = reactive(False)
    """The agent is working: a prompt sent now will wait for the turn to end."""
    quit_armed: reactive[bool] = reactive(False)
    """A first ctrl+c was pressed on the empty prompt; the app sets and clears it."""

    class PromptSent(Message):
        """The person sent a (non-blank) prompt."""

        def __init__(self, prompt_input: PromptInput, text: str) -> None:
            super().__init__()
            self.prompt_input = prompt_input
            self.text = text

        @property
        def control(self) -> PromptInput:
            return self.prompt_input

    def __init__(
        self,
        *,
        history_path: Path | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(
            placeholder=IDLE_PLACEHOLDER,
            select_on_focus=False,
            name=name,
            id=id,
            classes=classes,
        )
        self.history_path = history_path
        self._history: list[str] = load_history(history_path) if history_path else []
        self._file_lines = len(self._history)
        self._position: int | None = None
        """Index into the history being shown, or None while editing the draft."""
        self._draft = ""
        self.commands = CommandRegistry(complete=False)
        """The slash commands to complete; the app replaces it once the project's are read."""

    @property
    def history(self) -> tuple[str, ...]:
        """Sent prompts, oldest first."""
        return tuple(self._history)

    def use_history_file(self, path: Path) -> None:
        """Keep history in `path` from now on, after the prompts already in it (the app
        learns the project's data directory only once the session is prepared)."""
        sent_here = self._history
        self.history_path = path
        self._history = load_history(path)
        self._file_lines = len(self._history)
        for text in sent_here:
            self.remember(text)

    # -- history ---------------------------------------------------------------------------------

    def action_history_previous(self) -> None:
        if not self._history:
            return
        if self._position is None:
            self._draft = self.value
            self._position = len(self._history) - 1
        elif self._position > 0:
            self._position -= 1
        else:
            return
        self._show(self._history[self._position])

    def action_history_next(self) -> None:
        if self._position is None:
            return
        if self._position < len(self._history) - 1:
            self._position += 1
            self._show(self._history[self._position])
        else:
            self._position = None
            self._show(self._draft)

    def _show(self, text: str) -> None:
        self.value = text
        self.cursor_position = len(text)

    def remember(self, text: str, *, save: bool = True) -> None:
        """Add `text` to the history (and, if `save`, its file), unless it repeats the last
        prompt."""
        if self._history and self._history[-1] == text:
            return
        self._history.append(text)
        del self._history[:-HISTORY_LIMIT]
        if save and self.history_path is not None:
            self._save(text)

    def _save(self, text: str) -> None:
        import json

        path = self.history_path
        assert path is not None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if self._file_lines >= 2 * HISTORY_LIMIT:
                body = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in self._history)
                path.write_text(body, encoding="utf-8")
                self._file_lines = len(self._history)
            else:
                with path.open("a", encoding="utf-8") as file:
                    file.write(json.dumps(text, ensure_ascii=False) + "\n")
                self._file_lines += 1
        except OSError:
            log.warning("could not save the prompt history to %s", path, exc_info=True)

    # -- slash commands ------------------------------------------------------------------------

    def command_matches(self) -> list[tuple[str, Command]]:
        """The commands whose name starts with what is typed after `/`, while no space is."""
        text = self.value
        if not text.startswith("/") or any(c.isspace() for c in text):
            return []
        return self.commands.matching(text[1:])

    def on_input_changed(self, event: Input.Changed) -> None:
        self.show_command_matches()

    def show_command_matches(self) -> None:
        hints = self._hints()
        if hints is not None:
            hints.show_matches(self.command_matches())

    def _hints(self) -> CommandHints | None:
        parent = self.parent
        if parent is None:
            return None
        found = parent.query_children(CommandHints)
        return found.first() if found else None

    def action_complete_command(self) -> None:
        matches = self.command_matches()
        if not matches:
            self.screen.focus_next()  # what tab does anywhere else
            return
        self._show(f"/{matches[0][0]} ")

    # -- sending ---------------------------------------------------------------------------------

    async def action_submit(self) -> None:
        # Surrounding blank space is never meant; a blank prompt is cleared, not sent.
        text = self.value.strip()
        if not text:
            self.value = ""
            return
        self.remember(text)
        self._position = None
        self._draft = ""
        self.value = ""
        self.post_message(self.PromptSent(self, text))

    def clear_draft(self) -> bool:
        """Empty the prompt (ctrl+c); what it held stays one up-arrow away. Whether there
        was anything but blank space to keep."""
        text = self.value.strip()
        if text:
            self.remember(text, save=False)
        self._position = None
        self._draft = ""
        self.value = ""
        return bool(text)

    def watch_busy(self) -> None:
        self._show_placeholder()

    def watch_quit_armed(self) -> None:
        self._show_placeholder()

    def _show_placeholder(self) -> None:
        if self.quit_armed:
            self.placeholder = QUIT_PLACEHOLDER
        else:
            self.placeholder = BUSY_PLACEHOLDER if self.busy else IDLE_PLACEHOLDER
