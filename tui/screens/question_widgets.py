"""The option lists of the question dialog: marked with a shape, and enter picks.

Why it is shaped this way: Textual's radio buttons and selection list draw a chosen option
and an unchosen one with the same glyph in two colours, which a person who does not see the
colours (or a theme that makes them close) cannot tell apart. Here a chosen option is `●`
(one of several) or `✓` (ticked) and an unchosen one `○` or blank, and the option the
cursor is on has a `›`, whatever the colours.

In a single-choice question enter picks the highlighted option and says so (`Picked`), so
the dialog can go on to the next question or submit; space only marks it, as in Textual.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.strip import Strip
from textual.style import Style
from textual.widgets import RadioButton, RadioSet, SelectionList

PICKED, NOT_PICKED = "●", "○"
TICKED, NOT_TICKED = "✓", " "
CURSOR = "›"
"""Before the option the cursor is on: the highlight is a colour too, which not all see."""


class OptionButton(RadioButton):
    """A radio button whose glyph is its state: `●` picked, `○` not; `›` before the one the
    cursor is on (the one enter would pick)."""

    def render(self) -> Content:
        # As ToggleButton draws it (the button, then the label with a cell either side),
        # with the cursor's mark in the cell before the label.
        label_style = self.get_visual_style("toggle--label")
        pointer = CURSOR if self.has_class("-selected") else " "
        label = self._label.pad(0, 1).stylize_before(label_style)
        return Content.assemble(self._button, (pointer, label_style), label)

    @property
    def _button(self) -> Content:
        button_style = self.get_visual_style("toggle--button")
        side_style = Style(foreground=button_style.background, background=self.background_colors[1])
        return Content.assemble(
            (self.BUTTON_LEFT, side_style),
            (PICKED if self.value else NOT_PICKED, button_style),
            (self.BUTTON_RIGHT, side_style),
        )


class PickOne(RadioSet):
    """One choice of several; enter picks the highlighted one and posts `Picked`."""

    # No descriptions: the question dialog says these keys itself, beside Submit.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "pick", show=False),
        Binding("space", "toggle_button", show=False),
    ]

    class Picked(Message):
        """Enter picked option `index` of this question."""

        def __init__(self, choices: PickOne, index: int) -> None:
            super().__init__()
            self.choices = choices
            self.index = index

    def action_pick(self) -> None:
        index = self._selected  # RadioSet's highlighted button: it has no public name
        if index is None:
            return
        buttons = list(self.query(RadioButton))
        if not buttons[index].value:
            buttons[index].value = True
        self.post_message(self.Picked(self, index))


class PickMany(SelectionList[int]):
    """Several choices; a ticked one shows `✓`, an unticked one a blank box; `›` after the
    box of the one the cursor is on."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        index = self.scroll_offset.y + y
        if index >= self.option_count:  # past the last option: no button to mark
            return strip
        # SelectionList draws [left, inner, right, " ", prompt...]; only the inner glyph
        # changes.
        segments = list(strip)
        value = self.get_option_at_index(index).value
        glyph = TICKED if value in self.selected else NOT_TICKED
        segments[1] = Segment(glyph, segments[1].style, segments[1].control)
        if index == self.highlighted:
            segments[3] = Segment(CURSOR, segments[3].style, segments[3].control)
        return Strip(segments, strip.cell_length)
