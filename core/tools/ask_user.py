"""AskUserQuestion: put one to four multiple-choice questions to the user mid-task.

The questions go to the engine's `UserPort`, like a plan review, and the tool waits for the
answers. The user can always answer in their own words instead of picking an option (the UI
adds that choice), so options need not be exhaustive.

Three endings, each told to the model in words it can act on:
- answered: each question with its answer;
- declined (the port returns None: the person pressed esc): not an error, because nothing
  failed; the person chose not to answer, which the engine reads as their "no"
  (core/access/call_outcome.py), like a plan they kept planning. The result says so in
  those words and tells the model not to carry on as if they had answered; its output
  names it (`outcome_words`), so the call's line says "declined";
- nobody to answer (no port, or a session that must not prompt): *not* an error. Nothing
  went wrong and the model cannot fix anything by retrying; it is told to proceed on its best
  judgement and to say what it assumed, which is what a headless run needs.

Read-only (it never touches the project, so no mode refuses it) and not concurrency-safe:
the user sees one dialog at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import ConfigDict, Field

from ..access.call_outcome import QUESTIONS_DECLINED_OPENING, QUESTIONS_UNASKED_OPENING
from ..ports import Question, QuestionOption, QuestionRequest
from ..tool import (
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolResult,
    ValidationResult,
)

MAX_HEADER_CHARS = 12


class OptionInput(ToolInput):
    label: str = Field(
        min_length=1, max_length=80, description="The choice as shown, in 1-5 words."
    )
    description: str = Field(
        default="", description="What this choice means or implies, in a sentence."
    )


class QuestionInput(ToolInput):
    # populate_by_name: the engine re-validates inputs it dumped by field name.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    question: str = Field(
        min_length=1, description="The full question, ending with a question mark."
    )
    header: str = Field(
        min_length=1,
        max_length=MAX_HEADER_CHARS,
        description=f"A short tag shown as the question's title (at most {MAX_HEADER_CHARS} "
        'characters), such as "Database" or "Auth method".',
    )
    options: list[OptionInput] = Field(
        min_length=2, max_length=4, description="Two to four distinct choices."
    )
    multi_select: bool = Field(
        default=False,
        alias="multiSelect",
        description="Let the user pick several options (the choices must not exclude each other).",
    )


class AskUserQuestionInput(ToolInput):
    questions: list[QuestionInput] = Field(
        min_length=1, max_length=4, description="One to four questions, asked together."
    )


@dataclass(frozen=True, slots=True)
class QuestionOutcome:
    status: Literal["answered", "declined", "nobody"]
    questions: tuple[Question, ...]
    answers: tuple[tuple[str, str], ...] = ()
    """(question, answer) in question order; answer is "" when none was given."""

    @property
    def outcome_words(self) -> str:
        """What a front end calls the person's "no" on the call's line: "declined"."""
        return "declined" if self.status == "declined" else ""


PROMPT = """\
Ask the user questions when you need their input to go on: to settle an ambiguous \
instruction, learn a preference, or choose between approaches that would change the \
result. Each call asks one to four questions, shown together; each question offers two to \
four options.

- Write options as distinct, concrete choices with a short description of what each means. \
The user can always answer in their own words instead, so do not add an "Other" option.
- If you recommend an option, put it first and end its label with "(Recommended)".
- Set multiSelect when several options can be chosen together.
- header is a tag of at most 12 characters ("Auth method").
- Do not ask what you can find out yourself by reading the code, and do not use this to \
ask whether a plan is acceptable: in plan mode, ExitPlanMode asks for approval."""


class AskUserQuestion(Tool[AskUserQuestionInput, QuestionOutcome]):
    name = "AskUserQuestion"
    subagents = "none"
    search_hint = "ask the user a multiple choice question clarify preference"
    input_model = AskUserQuestionInput
    description = "Asks the user one to four multiple-choice questions."
    # Esc while the dialog is open ends the wait: nothing has happened yet to protect.
    interrupt_behavior = "cancel"

    instructions = PROMPT

    def is_read_only(self, input: AskUserQuestionInput) -> bool:
        return True  # it asks a person; nothing in the project changes

    def summarize_input(self, input: AskUserQuestionInput) -> str:
        return "; ".join(q.header for q in input.questions)

    async def validate_input(
        self, input: AskUserQuestionInput, context: ToolContext
    ) -> ValidationResult:
        problem = questions_problem(input)
        return ValidationResult.failed(problem) if problem else ValidationResult.passed()

    async def call(
        self, input: AskUserQuestionInput, context: ToolContext, progress: Progress
    ) -> ToolResult[QuestionOutcome]:
        problem = questions_problem(input)  # `call` may be reached without `validate_input`
        if problem:
            return ToolResult(problem, is_error=True)
        questions = tuple(
            Question(
                question=q.question,
                header=q.header,
                options=tuple(QuestionOption(o.label, o.description) for o in q.options),
                multi_select=q.multi_select,
            )
            for q in input.questions
        )
        port = context.options.user_port
        if port is None or context.permission_context.avoid_prompts:
            return ToolResult(QuestionOutcome("nobody", questions))
        request = QuestionRequest(tool_use_id=context.tool_use_id, questions=questions)
        try:
            answers = await port.ask_questions(request)
        except Exception as error:
            return ToolResult(
                f"The questions could not be shown to the user ({type(error).__name__}: "
                f"{error}). Ask them in your reply instead.",
                is_error=True,
            )
        if answers is None:
            return ToolResult(QuestionOutcome("declined", questions))
        given = tuple((q.question, str(answers.answers.get(q.question, ""))) for q in questions)
        return ToolResult(QuestionOutcome("answered", questions, given))

    def render(self, output: QuestionOutcome) -> ToolContent:
        return render(output)


def questions_problem(input: AskUserQuestionInput) -> str | None:
    """What makes these questions unaskable, or None. Answers are keyed by question text,
    so questions must differ; options must differ so that an answer names one."""
    seen: set[str] = set()
    for number, q in enumerate(input.questions, start=1):
        text = q.question.strip()
        if not text:
            return f"Question {number} is empty."
        if text in seen:
            return f"Question {number} repeats an earlier question; each must be different."
        seen.add(text)
        labels = [o.label.strip() for o in q.options]
        if any(not label for label in labels):
            return f"Question {number} has an option with an empty label."
        if len({label.casefold() for label in labels}) != len(labels):
            return f"Question {number} has two options with the same label; make them distinct."
    return None


def render(data: QuestionOutcome) -> str:
    if data.status == "nobody":
        asked = "; ".join(repr(q.question) for q in data.questions)
        return (
            f"{QUESTIONS_UNASKED_OPENING}, so these went unasked: {asked}. "
            "Proceed on your best judgement, choosing what the user most likely wants, and "
            "state the assumptions you made in your final reply."
        )
    if data.status == "declined":
        return (
            f"{QUESTIONS_DECLINED_OPENING} Do not assume answers: stop and wait "
            "for the user to tell you how to proceed."
        )
    lines = ["The user answered:"]
    for question, answer in data.answers:
        shown = answer.strip() or "(no answer)"
        lines.append(f'- "{question}" → {shown}')
    lines.append("Go on with these answers in mind.")
    return "\n".join(lines)
