"""The permission dialog: one waiting tool call, what it would do, why it asks, and the answer.

Why it is shaped this way:

- It is a `ModalScreen` that dismisses with a closed value, `PermissionChoice`: the engine's
  own `Approve | Reject`, plus `ApproveAll` (this call and every other waiting one, once),
  which only the front end can mean because only it knows what else is waiting. The app turns
  `ApproveAll` into one `Approve("once")` per waiting request.
- The input is shown as the person needs to judge it, not as JSON: a shell command
  highlighted (`PermissionRequest.command`), a file change as the unified diff the tool
  worked out before asking (`PermissionRequest.preview`: the UI thread never reads the
  file), anything else as JSON. Nothing here knows a tool by its name.
- The call's input and why it asks are the body, which scrolls (PageUp/PageDown); the
  choices, and whether a yes runs sandboxed, are the footer, pinned below it, so they stay
  on screen at 80×24 however long a command or diff is (dialog.py).
- "1 of N" is live: the app calls `set_waiting` when more calls start waiting, and the
  "allow all" choice (key `A`) exists only while more than one call waits.
- Risk is the decision's own (`PermissionRequest.risk`, set by the decision chain where it
  decides): high for what reaches outside the project, touches protected or critical paths,
  leaves the sandbox, or a shell command the analysis could not read. It colours the border.
- An MCP tool is named as people read it (`github › create_issue`); the rules it offers to
  keep are written with the real name (`mcp__github__create_issue`), which is what they match.
- The keys, the "no" that asks what to do instead, esc, and the moment after it appears in
  which no approval counts are `ChoiceDialog`'s (choices.py), shared with the plan dialog.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.color import Color, ColorParseError
from textual.containers import Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from core.access.decision import DeciderKind
from core.access.mcp_names import display_name
from core.ports import Approve, PermissionRequest, Reject
from core.tools.files import shown_path

from .choices import ChoiceDialog, choice_label
from .dialog import DIALOG_STYLESHEET


@dataclass(frozen=True, slots=True)
class ApproveAll:
    """Approve this call and every other call waiting now, each once."""


PermissionChoice = Approve | Reject | ApproveAll
Risk = Literal["high", "medium"]

_KIND_WORDS: dict[DeciderKind, str] = {
    "rule": "an ask rule",
    "hook": "a PreToolUse hook",
    "mode": "the permission mode",
    "tool": "the tool's own check",
    "user": "your earlier answer",
    "analysis": "the command check",
    "sandbox": "the sandbox settings",
    "default": "no rule or mode allows it",
    "skill": "a running skill's allowed-tools",
}

MAX_DIFF_BYTES = 2 * 1024 * 1024


def risk_of(request: PermissionRequest) -> Risk:
    """The decision's own risk (set by the decision chain where it decides)."""
    return request.risk


def why_words(request: PermissionRequest) -> str:
    """The second line of "why it asks": which part of the chain decided, in words."""
    by = request.decided_by
    if by.kind == "default":
        return f"Asked because {by.detail}." if by.detail else "Asked because no rule allows it."
    return f"Asked by {_KIND_WORDS[by.kind]}: {by.detail}."


def message_words(request: PermissionRequest) -> str:
    """The engine's message, with the tool it opens on named as people read it. Only that
    opening name: anywhere else the name may be a rule or a hook's words, which are data."""
    raw, shown = request.tool_name, display_name(request.tool_name)
    if shown != raw and request.message.startswith(raw + " "):
        return shown + request.message[len(raw) :]
    return request.message


class PermissionScreen(ChoiceDialog[PermissionChoice]):
    """Asks whether one tool call may run; dismisses with a `PermissionChoice`."""

    CSS_PATH = [DIALOG_STYLESHEET, "permission.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "choose('once')", "Yes"),
        Binding("a", "choose('always')", "Yes, always"),
        Binding("s", "choose('session')", "Yes, this session"),
        Binding("n", "choose('reject')", "No"),
        Binding("A", "choose('all')", "Allow all"),
        Binding("escape", "escape", "No"),
    ]
    DECLINE = "reject"

    def __init__(
        self, request: PermissionRequest, *, cwd: Path, position: int = 1, waiting: int = 1
    ) -> None:
        super().__init__()
        self.request = request
        self.cwd = cwd
        self.position = position
        self.waiting = max(waiting, position)
        self.rule = request.suggestions[0] if request.suggestions else None

    # --- what is shown ---------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="dialog", classes=f"-risk-{risk_of(request)}"):
            with Vertical(id="header"):
                yield Static(self._title(), id="title")
                if request.agent_label:
                    yield Static(f"asked by {request.agent_label}", id="agent", markup=False)
            with VerticalScroll(id="body"):
                with Vertical(id="input"):
                    yield from self._input_widgets()
                yield Static(Text(message_words(request)), id="message")
                yield Static(Text(why_words(request)), id="why")
            with Vertical(id="footer"):
                if request.sandbox:
                    # Beside the choices: it is what a yes means.
                    leaving = request.decided_by.kind == "sandbox"
                    yield Static(
                        Text(f"If you say yes, it runs {request.sandbox}."),
                        id="sandbox",
                        classes="-leaving" if leaving or "outside" in request.sandbox else "",
                    )
                yield OptionList(id="choices")
                yield Input(placeholder="tell the agent what to do instead", id="feedback")

    def on_mount(self) -> None:  # then ChoiceDialog.on_mount focuses the filled choices
        self._fill_choices()
        # Highlighting and diff colours come from the theme: redraw them when it changes.
        self.watch(self.app, "theme", self._theme_changed, init=False)

    async def _theme_changed(self) -> None:
        shown = self.query_one("#input", Vertical)
        await shown.remove_children()
        await shown.mount_all(list(self._input_widgets()))

    @property
    def syntax_theme(self) -> str:
        """The Pygments style for the command, cell or JSON: light themes need light styles."""
        return "monokai" if self.app.current_theme.dark else "friendly"

    def _title(self) -> Text:
        title = Text.assemble((display_name(self.request.tool_name), "bold"), " wants permission")
        if self.waiting > 1:
            title.append(f"   {self.position} of {self.waiting}", style="bold")
        return title

    def _input_widgets(self) -> ComposeResult:
        """What the call would do, as the engine described it in the request: the command it
        runs, the diff it would make, or else its input. No tool is known here by name, so a
        new tool needs nothing here."""
        request = self.request
        if request.command is not None:
            yield Static(self._syntax(request.command, "bash"), id="command")
            if description := request.input.get("description"):
                yield Static(Text(str(description)), id="description")
        elif request.preview is not None:
            preview = request.preview
            yield self._path_line(preview.path, preview.note)
            yield Static(self._diff_text(list(preview.lines)), id="diff")
        else:
            text = json.dumps(dict(request.input), indent=2, ensure_ascii=False, default=str)
            yield Static(self._syntax(text, "json"), id="json")

    def _path_line(self, path: str, note: str = "") -> Static:
        line = Text(shown_path(path, self.cwd), style="bold")
        if note:
            line.append(f"  ({note})")
        return Static(line, id="path")

    def _syntax(self, code: str, lexer: str) -> Syntax:
        return Syntax(
            code, lexer, theme=self.syntax_theme, word_wrap=True, background_color="default"
        )

    def _theme_style(self, variable: str) -> Style:
        try:
            color = Color.parse(self.app.theme_variables.get(variable, ""))
        except ColorParseError:
            return Style()
        return Style(color=color.rich_color)

    def _diff_text(self, lines: list[str]) -> Text:
        added, removed = self._theme_style("diff-added"), self._theme_style("diff-removed")
        muted = Style(dim=True)
        text = Text(no_wrap=False)
        for line in lines:
            if line.startswith(("+++", "---")):
                style = muted
            elif line.startswith("+"):
                style = added
            elif line.startswith("-"):
                style = removed
            elif line.startswith("@@"):
                style = muted
            else:
                style = Style()
            text.append(line + "\n", style=style)
        text.rstrip()
        return text if lines else Text("(no change)")

    @property
    def _whole_shell(self) -> bool:
        return self.request.command is not None

    def _fill_choices(self) -> None:
        options: list[Option] = [Option(choice_label("y", "Yes"), id="once")]
        if self.rule is not None:
            label = choice_label("a", "Yes, and don't ask again for ")
            label.append(self.rule, style="bold")
            options.append(Option(label, id="always"))
        if self.rule is not None:
            label = choice_label("s", "Yes, for this session: ")
            label.append(self.rule, style="bold")
            options.append(Option(label, id="session"))
        elif not self._whole_shell:
            tool = display_name(self.request.tool_name)  # the rule kept is the real name
            options.append(
                Option(
                    choice_label("s", f"Yes, for this session (every {tool} call)"), id="session"
                )
            )
        # A command with no narrow rule to keep gets no session-wide yes: it would be every
        # command.
        options.append(
            Option(choice_label("n", "No, and tell the agent what to do instead"), id="reject")
        )
        if self.waiting > 1:
            options.append(
                Option(choice_label("A", f"Allow all {self.waiting} waiting calls, once"), id="all")
            )
        choices = self.query_one("#choices", OptionList)
        highlighted = choices.highlighted
        choices.set_options(options)
        choices.highlighted = min(highlighted or 0, len(options) - 1)

    # --- live updates ----------------------------------------------------------------------

    def set_waiting(self, waiting: int) -> None:
        """How many calls wait now, this one included; updates "1 of N" and "allow all"."""
        self.waiting = max(waiting, self.position, 1)
        if not self.is_mounted:
            return
        try:
            title = self.query_one("#title", Static)
        except NoMatches:  # mounted but not composed yet: compose reads `waiting`
            return
        title.update(self._title())
        self._fill_choices()
        self.refresh_bindings()

    # --- answers ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "choose" and parameters:
            # False hides the key as well as disabling it: there is no such choice now.
            if parameters[0] == "always" and self.rule is None:
                return False
            if parameters[0] == "session" and self.rule is None and self._whole_shell:
                return False
            if parameters[0] == "all" and self.waiting <= 1:
                return False
        return True

    def _approve(self, choice: str) -> None:
        if choice == "once":
            self.dismiss(Approve("once"))
        elif choice == "always" and self.rule is not None:
            self.dismiss(Approve("always", rule=self.rule))
        elif choice == "session" and not (self.rule is None and self._whole_shell):
            self.dismiss(Approve("session", rule=self.rule or self.request.tool_name))
        elif choice == "all" and self.waiting > 1:
            self.dismiss(ApproveAll())

    def _decline(self, feedback: str) -> PermissionChoice:
        return Reject(feedback=feedback or None)
