"""Plan approval for ExitPlanMode: the plan as markdown, then how to go on.

Why it is shaped this way: the answer is the engine's own closed `PlanAnswer`
(`PlanApproved(mode) | KeepPlanning(feedback)`), so the screen adds no type of its own. The
plan is markdown the model wrote, so it is rendered with Textual's `Markdown` as the
dialog's body, which scrolls (PageUp/PageDown), and the three choices are its footer, pinned
below it, visible at 80×24 however long the plan is (dialog.py). The prompts the plan asks
for ("run tests") are said beside the choices, because approving the plan grants them; a
list too long for two lines there is listed after the plan and only counted beside the
choices, so it cannot push the plan off the screen. Keeping on planning is the
dialog's "no": like the permission dialog's, it asks for feedback in place, and both take
their keys, feedback box and esc from `ChoiceDialog` (choices.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from core.ports import KeepPlanning, PlanAnswer, PlanApproved, PlanRequest

from .choices import ChoiceDialog, choice_label
from .dialog import DIALOG_STYLESHEET

MAX_PROMPTS_CHARS_BESIDE_CHOICES = 120
"""Longer than this (two lines at 80 columns), the prompts a plan asks for are listed after
the plan, in the body, and the footer only counts them."""


def shown_plan_path(path: Path) -> str:
    """The plan file with the home directory as `~`: shorter, and it says whose it is."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


class PlanScreen(ChoiceDialog[PlanAnswer]):
    """Shows a plan; dismisses with `PlanApproved(mode)` or `KeepPlanning(feedback)`."""

    CSS_PATH = [DIALOG_STYLESHEET, "plan.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "choose('accept')", "Approve, accept edits"),
        Binding("2", "choose('default')", "Approve, ask for edits"),
        Binding("3", "choose('keep')", "Keep planning"),
        Binding("escape", "escape", "Keep planning"),
    ]
    DECLINE = "keep"

    def __init__(self, request: PlanRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="dialog"):
            with Vertical(id="header"):
                title = "The plan is ready"
                if request.agent_label:
                    title += f" ({request.agent_label})"
                yield Static(Text(title, style="bold"), id="title")
                yield Static(Text(shown_plan_path(request.plan_path)), id="plan-path")
            asks = "; ".join(f"{p.prompt} ({p.tool})" for p in request.allowed_prompts)
            listed_in_body = len(asks) > MAX_PROMPTS_CHARS_BESIDE_CHOICES
            with VerticalScroll(id="body"):
                yield Markdown(request.plan or "*(the plan is empty)*", id="plan-markdown")
                if listed_in_body:
                    lines = "\n".join(f"  • {p.prompt} ({p.tool})" for p in request.allowed_prompts)
                    yield Static(Text(f"The plan asks to:\n{lines}"), id="prompts-list")
            with Vertical(id="footer"):
                # Beside the choices, because approving the plan grants them; a long list
                # would squeeze the plan off the screen, so it is counted here instead.
                if listed_in_body:
                    count = len(request.allowed_prompts)
                    words = f"The plan asks for {count} kinds of command, listed below the plan."
                    yield Static(Text(words), id="prompts")
                elif request.allowed_prompts:
                    yield Static(Text(f"The plan asks to: {asks}"), id="prompts")
                yield OptionList(
                    Option(choice_label("1", "Approve, and accept edits"), id="accept"),
                    Option(choice_label("2", "Approve, and ask before each edit"), id="default"),
                    Option(
                        choice_label("3", "Keep planning, and tell the agent what to change"),
                        id="keep",
                    ),
                    id="choices",
                )
                yield Input(placeholder="what should the plan change?", id="feedback")

    def _approve(self, choice: str) -> None:
        if choice == "accept":
            self.dismiss(PlanApproved("acceptEdits"))
        elif choice == "default":
            self.dismiss(PlanApproved("default"))

    def _decline(self, feedback: str) -> PlanAnswer:
        return KeepPlanning(feedback)
