"""`FileView`: a file of any size on screen, one line at a time, through a `LineIndex`.

Why it is shaped this way:

- It is a Line-API `ScrollView`: `render_line` asks the index for just the rows on screen,
  so the first frame of a 1 GB file costs one block's worth of reading. The virtual height is
  the number of lines known so far; the rest is counted a few milliseconds per timer tick on
  the UI's own thread and the height grows as it does (`IndexAdvanced` tells the screen).
  Not a thread: `bytes.count` holds the GIL, and a counting thread made every return of the
  event loop from `epoll` wait out the GIL switch interval, so the first frame of a 1 GB file
  took over a second instead of a tenth of one. Ticks keep the UI's share of the CPU fixed.
- Lines are cut at `MAX_LINE_CHARS` (a 1 GB single-line file must not become a 1 GB string);
  tabs are expanded, ANSI escapes removed and other control characters shown as U+FFFD, so
  what a command printed can never move the terminal's cursor.
- Syntax highlighting is only for files under `HIGHLIGHT_LIMIT`: a thread worker guesses the
  language from the content (outputs are `.txt`, so the name says nothing), lexes once with
  pygments and keeps one `Text` per line. Colours come from a Rich syntax theme chosen by the
  app theme's darkness, without its background, so the view keeps the app's surface.
- Searching (and counting which match it is) runs in a thread worker; the result arrives as
  `SearchFinished`. Follow mode is a reactive plus a timer that refreshes the index and
  scrolls to the end; the interval is a constructor argument so tests can make it short.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer
from textual.worker import get_current_worker

from .line_index import SCAN_CHUNK, LineIndex

MAX_LINE_CHARS = 10_000
HIGHLIGHT_LIMIT = 1024 * 1024
COUNT_STEP_BYTES = 32 * 1024 * 1024
COUNT_TICK_S = 0.02
COUNT_BUDGET_S = 0.01
HIGHLIGHTED_LANGUAGES = frozenset(
    {"python", "json", "javascript", "typescript", "bash", "diff", "yaml", "toml", "html"}
    | {"xml", "c", "cpp", "rust", "go", "java", "markdown", "sql", "ini", "css"}
)
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROLS = {code: "\ufffd" for code in (*range(0x20), 0x7F) if code not in (0x09, 0x0A)}


def displayable(text: str) -> str:
    return _ANSI.sub("", text).translate(_CONTROLS).expandtabs(4)


def guess_language(text: str) -> str | None:
    """The pygments alias to highlight `text` with, or None for plain output."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            json.loads(text)
        except ValueError:
            pass
        else:
            return "json"
    if text.startswith(("diff --git", "--- ", "Index: ")):
        return "diff"
    from pygments.lexers import guess_lexer  # type: ignore[import-untyped]
    from pygments.util import ClassNotFound  # type: ignore[import-untyped]

    try:
        lexer = guess_lexer(text[:8192])
    except ClassNotFound:
        return None
    alias = lexer.aliases[0] if lexer.aliases else ""
    return alias if alias in HIGHLIGHTED_LANGUAGES else None


def highlight_lines(text: str, language: str, *, dark: bool) -> list[Text]:
    from pygments.lexers import get_lexer_by_name

    theme = Syntax.get_theme("monokai" if dark else "default")
    highlighted = Text()
    for token_type, value in get_lexer_by_name(language).get_tokens(text):
        style = theme.get_style_for_token(token_type)
        highlighted.append(value, Style(color=style.color, bold=style.bold, italic=style.italic))
    return list(highlighted.split("\n", allow_blank=True))


class FileView(ScrollView, can_focus=True):
    """The lines of one file, with a line-number gutter, search matches and follow mode."""

    COMPONENT_CLASSES = {
        "file-view--gutter",
        "file-view--current-gutter",
        "file-view--match",
        "file-view--current-match",
        "file-view--message",
    }

    DEFAULT_CSS = """
    FileView {
        background: $surface;
        & > .file-view--gutter { color: $text-muted; }
        & > .file-view--current-gutter { color: $text; background: $accent 40%; }
        & > .file-view--match { background: $warning 35%; }
        & > .file-view--current-match { color: $text; background: $accent; text-style: bold; }
        & > .file-view--message { color: $text-muted; text-style: italic; }
    }
    """

    following: reactive[bool] = reactive(False)
    current_line: reactive[int | None] = reactive(None)
    search_pattern: reactive[str] = reactive("")

    class IndexAdvanced(Message):
        """More of the file has been counted (or the file grew)."""

        def __init__(self, line_count: int, complete: bool) -> None:
            super().__init__()
            self.line_count = line_count
            self.complete = complete

    class SearchFinished(Message):
        """A search ended: `line` is the matching line (0-based) or None."""

        def __init__(self, pattern: str, line: int | None, ordinal: int | None) -> None:
            super().__init__()
            self.pattern = pattern
            self.line = line
            self.ordinal = ordinal

    def __init__(
        self,
        path: Path,
        *,
        follow: bool = False,
        refresh_interval: float = 0.5,
        block_size: int | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.path = path
        self.refresh_interval = refresh_interval
        self.error: str | None = None
        self.index: LineIndex | None = None
        self._highlighted: list[Text] | None = None
        self.language: str | None = None
        """The language the lines are highlighted as, once the worker has decided."""
        self._widest = 0
        self._follow_timer: Timer | None = None
        self._count_timer: Timer | None = None
        try:
            if block_size is None:
                self.index = LineIndex(path)
            else:
                self.index = LineIndex(path, block_size=block_size)
        except OSError as error:
            self.error = f"Cannot open {path}: {error.strerror or error}"
        self.set_reactive(FileView.following, follow and self.index is not None)

    # -- life cycle -------------------------------------------------------------------------

    def on_mount(self) -> None:
        self._follow_timer = self.set_interval(
            self.refresh_interval, self._follow_tick, pause=not self.following
        )
        if self.index is None:
            return
        self.index.advance(SCAN_CHUNK)  # enough for the first screens, in milliseconds
        self._sync_virtual_size()
        if not self.index.is_complete:
            self._count_timer = self.set_interval(COUNT_TICK_S, self._count_some)
        if not self.following and 0 < self.index.size <= HIGHLIGHT_LIMIT:
            self._highlight(dark=self.app.current_theme.dark)
        if self.following:
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True)

    def on_unmount(self) -> None:
        if self.index is not None:
            self.workers.cancel_node(self)
            self.index.close()

    @property
    def line_count(self) -> int:
        return self.index.line_count if self.index is not None else 0

    def _sync_virtual_size(self) -> None:
        if self.index is None:
            return
        count = self.index.line_count
        self.virtual_size = Size(self._gutter_width(count) + self._widest, count)
        self.post_message(self.IndexAdvanced(count, self.index.is_complete))

    def _gutter_width(self, count: int) -> int:
        return max(len(f"{count:,}".replace(",", "")), 3) + 1

    def _count_some(self) -> None:
        """Count the file for a few milliseconds of this tick; stop when all is counted."""
        if self.index is None:
            return
        deadline = time.perf_counter() + COUNT_BUDGET_S
        more = True
        while more and time.perf_counter() < deadline:
            more = self.index.advance(SCAN_CHUNK // 4)
        self._sync_virtual_size()
        if not more and self._count_timer is not None:
            self._count_timer.stop()
            self._count_timer = None

    @work(thread=True, exclusive=True, group="highlight", exit_on_error=False)
    def _highlight(self, *, dark: bool) -> None:
        assert self.index is not None
        text = "\n".join(displayable(line) for line in self.index.lines(0, 10**9))
        try:
            language = guess_language(text)
            lines = None if language is None else highlight_lines(text, language, dark=dark)
        except Exception:  # a lexer's bug costs the colours, not the view
            return
        if lines is not None:
            self.app.call_from_thread(self._use_highlighting, lines, language)

    def _use_highlighting(self, lines: list[Text], language: str | None) -> None:
        self._highlighted = lines
        self.language = language
        self.refresh()

    # -- follow mode ------------------------------------------------------------------------

    def watch_following(self, following: bool) -> None:
        if self._follow_timer is None:
            return
        if following:
            self._follow_timer.resume()
            self._follow_tick()
        else:
            self._follow_timer.pause()

    # Looking back up the file while following would be yanked down again at the next tick.
    def action_scroll_home(self) -> None:
        self.following = False
        super().action_scroll_home()

    def action_scroll_up(self) -> None:
        self.following = False
        super().action_scroll_up()

    def action_page_up(self) -> None:
        self.following = False
        super().action_page_up()

    def on_mouse_scroll_up(self) -> None:
        self.following = False

    def _follow_tick(self) -> None:
        if self.index is None:
            return
        if self.index.refresh():
            self._highlighted = self.language = None  # growing output, not source: plain
            self.index.advance(COUNT_STEP_BYTES)
            self._sync_virtual_size()
            self.refresh()
        self.scroll_end(animate=False, immediate=True)

    # -- navigation and search --------------------------------------------------------------

    def go_to_line(self, number: int) -> int:
        """Scroll line `number` (0-based, clamped to the file) into view and mark it."""
        if self.index is None:
            return 0
        if self.index.line_start(max(number, 0)) is None:
            number = self.index.line_count - 1
        number = max(number, 0)
        self._sync_virtual_size()
        self.current_line = number
        self.scroll_to(y=max(number - self.size.height // 3, 0), animate=False, immediate=True)
        return number

    def find(self, pattern: str, *, backwards: bool = False) -> None:
        """Look for the next (or previous) line with `pattern`; `SearchFinished` reports."""
        if self.index is None or not pattern:
            return
        if pattern != self.search_pattern or self.current_line is None:
            start = int(self.scroll_offset.y)
            start = start - 1 if backwards else start
        else:
            start = self.current_line + (-1 if backwards else 1)
        self.search_pattern = pattern
        self._search(pattern, start, backwards)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(self, pattern: str, start: int, backwards: bool) -> None:
        assert self.index is not None
        try:
            line = self.index.search(pattern, start, backwards=backwards)
            ordinal = None if line is None else self.index.count_matching_lines(pattern, line)
        except (OSError, ValueError):  # the file went away under the map: no match to show
            line, ordinal = None, None
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_match, pattern, line, ordinal)

    def _show_match(self, pattern: str, line: int | None, ordinal: int | None) -> None:
        if line is not None:
            self.go_to_line(line)
        self.refresh()
        self.post_message(self.SearchFinished(pattern, line, ordinal))

    def watch_current_line(self) -> None:
        self.refresh()

    def watch_search_pattern(self) -> None:
        self.refresh()

    # -- rendering --------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        if self.index is None or self.index.size == 0:
            message = self.error if self.index is None else "(empty)"
            if y != 0 or message is None:
                return Strip.blank(width, base)
            style = base + self.get_component_rich_style("file-view--message")
            return Strip([Segment(message, style)]).crop_extend(0, width, base)
        number = scroll_y + y
        text = self._line_text(number)
        if text is None:
            return Strip.blank(width, base)
        gutter_width = self._gutter_width(self.index.line_count)
        gutter_class = "file-view--current-gutter" if number == self.current_line else ""
        gutter_style = base + self.get_component_rich_style("file-view--gutter")
        if gutter_class:
            gutter_style += self.get_component_rich_style(gutter_class)
        gutter = Segment(f"{number + 1:>{gutter_width - 1}} ", gutter_style)
        text.stylize_before(base)
        self._mark_matches(text, number)
        body = Strip(text.render(self.app.console), text.cell_len)
        if text.cell_len > self._widest:
            self._widest = text.cell_len
            self.call_after_refresh(self._sync_virtual_size)
        body = body.crop_extend(scroll_x, scroll_x + max(width - gutter_width, 0), base)
        return Strip.join([Strip([gutter], gutter_width), body])

    def _line_text(self, number: int) -> Text | None:
        assert self.index is not None
        if self._highlighted is not None and number < len(self._highlighted):
            return self._highlighted[number].copy()
        raw = self.index.line(number, max_bytes=MAX_LINE_CHARS * 4)
        if raw is None:
            return None
        return Text(displayable(raw[:MAX_LINE_CHARS]), end="")

    def _mark_matches(self, text: Text, number: int) -> None:
        if not self.search_pattern:
            return
        needle = self.search_pattern.lower()
        component = (
            "file-view--current-match" if number == self.current_line else "file-view--match"
        )
        style = self.get_component_rich_style(component)
        haystack = text.plain.lower()
        found = haystack.find(needle)
        while found >= 0:
            text.stylize(style, found, found + len(needle))
            found = haystack.find(needle, found + len(needle))
