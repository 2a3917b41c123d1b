"""What the model is told when a call's input does not fit the tool's schema: one line per
problem, naming the parameter, in lower case, with the value it gave cut to 60 characters.
The exact wording was a mutation of `format_input_error` that no test noticed
(docs/mutation.md)."""

from __future__ import annotations

from engine_helpers import make_context, make_services, text_of
from tools_for_tests import Sleep

from core.executor import ToolCall, run_tool_use


async def told(raw: object) -> str:
    outcome = await run_tool_use(
        ToolCall("t", "Sleep", raw), make_services(), make_context([Sleep()])
    )
    assert outcome.failed_stage == "schema"
    return text_of(outcome).removeprefix("<tool_use_error>").removesuffix("</tool_use_error>")


async def test_each_problem_is_one_line_naming_the_parameter():
    assert await told({"ms": "soon", "colour": "red"}) == (
        "Sleep failed because its input is invalid:\n"
        "- `ms`: input should be a valid integer, unable to parse string as an integer "
        "(got 'soon')\n"
        "- an unexpected parameter `colour` was provided"
    )


async def test_a_long_value_is_cut_to_sixty_characters():
    given = "s" * 100
    said = await told({"ms": given})
    shown = repr(given)[:57] + "..."
    assert said.endswith(f"(got {shown})") and len(shown) == 60
    exactly = "s" * 58  # its repr is 60 characters: shown whole
    assert (await told({"ms": exactly})).endswith(f"(got {exactly!r})")


async def test_input_that_is_not_an_object_says_what_it_was():
    assert await told(["a"]) == (
        "Sleep failed because its input is invalid:\n"
        "- the input must be a JSON object of parameters, not list"
    )
