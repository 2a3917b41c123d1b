"""Questions for AskUserQuestion: each with its options and room for the user's own words.

Why it is shaped this way: the answer is the engine's closed `Answers | None` (None: the user
dismissed the questions). Single-choice questions are a `RadioSet`, multiple-choice ones a
`SelectionList`, so the usual keys work; every question also has an "Other" input, and words
typed there win over the options (they are what the user means). Submitting is refused until
every question has an answer, so the model never gets a half-filled form; the Submit button
says so by being disabled, and enter in an input tries to submit.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, RadioButton, RadioSet, SelectionList, Static

from core.ports import Answers, Question, QuestionRequest


def _option_label(label: str, description: str) -> Text:
    text = Text(label)
    if description:
        text.append(f"  {description}", style="dim")
    return text


class QuestionScreen(ModalScreen[Answers | None]):
    """Asks the model's questions; dismisses with `Answers`, or None when dismissed."""

    CSS_PATH = "question.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_questions", "Dismiss"),
        Binding("ctrl+s", "submit", "Submit"),
    ]

    def __init__(self, request: QuestionRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            title = "The agent asks"
            if self.request.agent_label:
                title += f" ({self.request.agent_label})"
            yield Static(Text(title, style="bold"), id="title")
            with VerticalScroll(id="questions"):
                for index, question in enumerate(self.request.questions):
                    yield from self._question(index, question)
            yield Button("Submit", id="submit", variant="primary", disabled=True)

    def _question(self, index: int, question: Question) -> ComposeResult:
        with Vertical(classes="question", id=f"q{index}"):
            yield Static(Text(question.header, style="bold"), classes="header")
            yield Static(Text(question.question), classes="text")
            options = question.options
            if question.multi_select:
                yield SelectionList[int](
                    *((_option_label(o.label, o.description), i) for i, o in enumerate(options)),
                    id=f"choices-{index}",
                )
            else:
                with RadioSet(id=f"choices-{index}"):
                    for option in options:
                        yield RadioButton(_option_label(option.label, option.description))
            yield Input(placeholder="Other: in your own words", id=f"other-{index}")

    def on_mount(self) -> None:
        for other in self.query(Input):
            other.cursor_blink = not self.app.is_headless
        if self.request.questions:
            self.query_one("#choices-0").focus()

    # --- answers ---------------------------------------------------------------------------

    def answer(self, index: int) -> str | None:
        """Question `index`'s answer as the model will read it, or None while unanswered."""
        question = self.request.questions[index]
        own = self.query_one(f"#other-{index}", Input).value.strip()
        if own:
            return own
        if question.multi_select:
            chosen = self.query_one(f"#choices-{index}", SelectionList).selected
            labels = [question.options[i].label for i in sorted(chosen)]
            return ", ".join(labels) or None
        pressed = self.query_one(f"#choices-{index}", RadioSet).pressed_index
        return question.options[pressed].label if pressed >= 0 else None

    def answers(self) -> Answers | None:
        found: dict[str, str] = {}
        for index, question in enumerate(self.request.questions):
            answer = self.answer(index)
            if answer is None:
                return None
            found[question.question] = answer
        return Answers(found)

    def _refresh_submit(self) -> None:
        self.query_one("#submit", Button).disabled = self.answers() is None

    @on(RadioSet.Changed)
    @on(SelectionList.SelectedChanged)
    @on(Input.Changed)
    def _answer_changed(self) -> None:
        self._refresh_submit()

    def action_submit(self) -> None:
        answers = self.answers()
        if answers is None:
            self.notify("Every question needs an answer first.", severity="warning")
            return
        self.dismiss(answers)

    def action_dismiss_questions(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted)
    def _input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    @on(Button.Pressed, "#submit")
    def _submit_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_submit()
