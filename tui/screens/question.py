"""Questions for AskUserQuestion: each with its options and room for the user's own words.

Why it is shaped this way: the answer is the engine's closed `Answers | None` (None: the
person declined to answer, with esc; the tool tells the model so, and it is not a failure).
Single-choice questions are a `PickOne` (radio buttons), multiple-choice ones a `PickMany`
(a selection list); both mark a chosen option with a shape, not only a colour
(question_widgets.py). Every question also has an "Other" input, and words typed there win
over the options (they are what the user means).

Enter moves the person on: on a single-choice option it picks it, and in an "Other" box it
takes the words; then the dialog submits if every question has an answer, or else goes to
the next question without one. So a single question is answered with the arrows and
enter. Esc declines, except in an "Other" box, where it first goes back to the question's
options. Submitting is refused until every question has an answer, so the model never gets a
half-filled form; the Submit button says so by being disabled. The keys are written in the
footer, beside Submit, because nothing else on screen says them. The questions are the
dialog's body, which scrolls; Submit and the keys are its footer and stay (dialog.py).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, SelectionList, Static

from core.ports import Answers, Question, QuestionRequest

from .dialog import DIALOG_STYLESHEET, DialogScreen
from .question_widgets import OptionButton, PickMany, PickOne


def _option_label(label: str, description: str) -> Text:
    text = Text(label)
    if description:
        text.append(f"  {description}", style="dim")
    return text


def keys_text(questions: tuple[Question, ...]) -> Text:
    """The keys of this dialog, as its footer says them (only those its questions use)."""
    keys: list[tuple[str, str]] = [("↑↓", "move")]
    if any(not q.multi_select for q in questions):
        keys.append(("enter", "pick"))
    if any(q.multi_select for q in questions):
        keys.append(("space", "tick"))
    keys += [("tab", "next"), ("ctrl+s", "submit"), ("esc", "decline")]
    text = Text()
    for number, (key, words) in enumerate(keys):
        if number:
            text.append(" · ")
        text.append(key, style="bold")
        text.append(f" {words}")
    return text


class QuestionScreen(DialogScreen[Answers | None]):
    """Asks the model's questions; dismisses with `Answers`, or None when declined."""

    CSS_PATH = [DIALOG_STYLESHEET, "question.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_questions", "Decline to answer"),
        Binding("ctrl+s", "submit", "Submit"),
    ]

    def __init__(self, request: QuestionRequest) -> None:
        super().__init__()
        self.request = request
        self._picked: dict[int, int] = {}
        """Single-choice questions' picks by question: kept here, because the radio set
        learns of a pick only after the message that says enter picked it."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            with Vertical(id="header"):
                title = "The agent asks"
                if self.request.agent_label:
                    title += f" ({self.request.agent_label})"
                yield Static(Text(title, style="bold"), id="title")
            with VerticalScroll(id="body"):
                for index, question in enumerate(self.request.questions):
                    yield from self._question(index, question)
            with Horizontal(id="footer"):
                yield Button("Submit", id="submit", variant="primary", disabled=True)
                yield Static(keys_text(self.request.questions), id="keys")

    def _question(self, index: int, question: Question) -> ComposeResult:
        with Vertical(classes="question", id=f"q{index}"):
            yield Static(Text(question.header, style="bold"), classes="header")
            yield Static(Text(question.question), classes="text")
            options = question.options
            if question.multi_select:
                yield PickMany(
                    *((_option_label(o.label, o.description), i) for i, o in enumerate(options)),
                    id=f"choices-{index}",
                )
            else:
                with PickOne(id=f"choices-{index}"):
                    for option in options:
                        yield OptionButton(_option_label(option.label, option.description))
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
        picked = self._picked.get(index)
        return question.options[picked].label if picked is not None else None

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

    @on(PickOne.Changed)
    def _picked_changed(self, event: PickOne.Changed) -> None:
        self._picked[self._index_of(event.radio_set.id)] = event.index
        self._refresh_submit()

    @on(SelectionList.SelectedChanged)
    @on(Input.Changed)
    def _answer_changed(self) -> None:
        self._refresh_submit()

    @on(PickOne.Picked)
    def _picked_with_enter(self, event: PickOne.Picked) -> None:
        event.stop()
        index = self._index_of(event.choices.id)
        self._picked[index] = event.index
        self._refresh_submit()
        self._go_on(index)

    @on(Input.Submitted)
    def _input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._go_on(self._index_of(event.input.id))

    def _go_on(self, index: int) -> None:
        """After question `index` was answered with enter: submit if every question has an
        answer, or else go to the next question that has none."""
        if self.answers() is not None:
            self.action_submit()
            return
        count = len(self.request.questions)
        for step in range(1, count + 1):
            later = (index + step) % count
            if self.answer(later) is None:
                self.query_one(f"#choices-{later}").focus()
                return

    @staticmethod
    def _index_of(widget_id: str | None) -> int:
        """The question a `choices-N` or `other-N` widget belongs to."""
        return int((widget_id or "-0").rsplit("-", 1)[1])

    def action_submit(self) -> None:
        answers = self.answers()
        if answers is None:
            self.notify("Every question needs an answer first.", severity="warning")
            return
        self.dismiss(answers)

    def action_dismiss_questions(self) -> None:
        focused = self.focused
        if isinstance(focused, Input):
            # As in the permission dialog's feedback box: esc leaves the box (keeping what
            # was typed) for its question's options; from there it declines.
            self.query_one(f"#choices-{self._index_of(focused.id)}").focus()
            return
        self.dismiss(None)

    @on(Button.Pressed, "#submit")
    def _submit_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_submit()
