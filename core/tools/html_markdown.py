"""HTML to markdown, on the standard library's `html.parser`, for WebFetch.

The model reads pages better as markdown than as HTML, and a page's markup is mostly noise
(scripts, styles, navigation) that would crowd the page's text out of the size limit. The
converter is small on purpose: it keeps what carries meaning in prose (headings, paragraphs,
links, lists, emphasis, code, quotes, table rows) and drops the rest, never trying to lay out
a page the way a browser would.

It must survive the HTML found in the wild, where end tags are left out and elements are
misnested, so nothing here depends on the document being well formed:

- Inline constructs that wrap text (links, emphasis, inline code, headings, table cells) are
  *captures*: their text is collected apart and wrapped when they end. An end tag closes the
  innermost open capture of its name and those opened inside it; an end tag with no open
  capture is ignored; captures still open at the end of the document are closed then.
- Block structure is written as pending line breaks, so an omitted `</p>` or `</li>` costs
  nothing: the next block starts on its own line all the same.
- Whitespace is collapsed outside `<pre>`, as a browser does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin

SKIPPED = frozenset(
    {"script", "style", "nav", "noscript", "svg", "template", "iframe", "canvas", "object"}
)
"""Elements whose whole content is dropped: code, styling and site navigation, not text."""

VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}
    | {"track", "wbr", "param", "keygen"}
)
BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "header", "footer", "aside", "figure"}
    | {"figcaption", "address", "details", "summary", "form", "fieldset", "dl", "dt", "dd"}
    | {"center", "body", "html", "caption", "legend", "hgroup", "search"}
)
TIGHT = frozenset({"li", "dt", "dd", "tr", "td", "th", "summary"})
"""Blocks that start a new line but not a new paragraph."""
HEADINGS = {f"h{level}": level for level in range(1, 7)}
EMPHASIS = {"strong": "**", "b": "**", "em": "*", "i": "*", "del": "~~", "s": "~~"}
CAPTURED = frozenset({"a", "code", "title", "td", "th", *HEADINGS, *EMPHASIS})

_ANCHOR_MARKS = frozenset({"¶", "#", "§", "🔗"})
_SPACE = re.compile(r"\s+")
_BLANK_LINES = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
_LANGUAGE_CLASS = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")


@dataclass(frozen=True, slots=True)
class Converted:
    title: str
    markdown: str


@dataclass(slots=True)
class _Capture:
    tag: str
    href: str = ""
    parts: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _List:
    ordered: bool
    next_number: int = 1


class _Converter(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.title = ""
        self._out: list[str] = []
        self._line_start = True
        self._pending_breaks = 0
        self._newlines = 0
        """Line breaks at the end of the output: breaks asked for are added up to, not on."""
        self._marker = ""
        self._skip_depth = 0
        self._captures: list[_Capture] = []
        self._lists: list[_List] = []
        self._quote_depth = 0
        self._pre: list[str] | None = None
        self._pre_language = ""
        self._table_depth = 0
        self._row: list[str] | None = None
        self._rows_written = 0
        self._row_has_header = False

    # -- writing ----------------------------------------------------------------------------

    def _prefix(self) -> str:
        quote = "> " * self._quote_depth
        depth = len(self._lists)
        if self._marker:
            marker, self._marker = self._marker, ""
            return quote + "  " * (depth - 1) + marker
        return quote + "  " * depth

    def _break(self, count: int) -> None:
        """Ask for `count` line breaks before whatever is written next (never fewer)."""
        if self._captures:
            self._inline(" ")
            return
        if self._lists and count > 1:
            count = 1  # blocks inside a list item stay in the item
        if self._out:
            self._pending_breaks = max(self._pending_breaks, count)

    def _write(self, text: str) -> None:
        """Text into the main output, after any pending breaks and the line's prefix."""
        if self._pending_breaks or self._line_start:
            # Whitespace between blocks is not text: it must not use up the pending breaks.
            text = text.lstrip(" ")
            if not text:
                return
        self._flush_breaks()
        if self._line_start:
            self._out.append(self._prefix())
            self._line_start = False
        elif text.startswith(" ") and self._out and self._out[-1].endswith(" "):
            text = text[1:]
        self._out.append(text)
        self._newlines = 0

    def _flush_breaks(self) -> None:
        wanted, self._pending_breaks = self._pending_breaks, 0
        if not wanted:
            return
        # A blank line inside a quote keeps the quote marks, or the quote would end there.
        blank = ("> " * self._quote_depth).rstrip()
        while self._newlines < wanted:
            self._out.append("\n" if self._newlines == 0 else blank + "\n")
            self._newlines += 1
        self._line_start = True

    def _write_lines(self, text: str) -> None:
        """Preformatted text, each line with the current prefix."""
        for index, line in enumerate(text.split("\n")):
            if index:
                self._out.append("\n")
                self._line_start = True
            self._flush_breaks()
            if self._line_start:
                self._out.append(self._prefix())
                self._line_start = False
            self._out.append(line)
        self._newlines = 0

    def _inline(self, text: str) -> None:
        if self._captures:
            self._captures[-1].parts.append(text)
        else:
            self._write(text)

    # -- parser events ----------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag in SKIPPED:
            self._skip_depth += 1
            return
        if self._skip_depth:
            return
        if self._pre is not None:
            if tag == "br":
                self._pre.append("\n")
            elif tag == "code" and not self._pre_language:
                self._pre_language = _language(attributes.get("class", ""))
            return
        if tag == "base" and attributes.get("href"):
            self.base_url = urljoin(self.base_url, attributes["href"])
        elif tag == "br":
            self._break(1)
        elif tag == "hr":
            self._break(2)
            if not self._captures:
                self._write("---")
                self._break(2)
        elif tag == "img":
            self._image(attributes)
        elif tag == "pre":
            self._break(2)
            self._pre = []
            self._pre_language = _language(attributes.get("class", ""))
        elif tag in ("ul", "ol", "menu"):
            self._break(1 if self._lists else 2)
            start = attributes.get("start", "1")
            self._lists.append(_List(tag == "ol", int(start) if start.isdigit() else 1))
        elif tag == "li":
            self._list_item()
        elif tag == "blockquote":
            self._break(2)
            self._flush_breaks()  # the blank line before a quote is not part of it
            self._quote_depth += 1
        elif tag == "table":
            self._table_start()
        elif tag == "tr" and self._table_depth == 1:
            self._end_row()
            self._row = []
        elif tag in ("td", "th") and self._table_depth == 1:
            self._cell_start(tag)
        elif tag in CAPTURED:
            if tag in HEADINGS:
                self._break(2)
            href = attributes.get("href", "") if tag == "a" else ""
            self._captures.append(_Capture(tag, href))
        elif tag in BLOCKS or tag in TIGHT:
            self._break(1 if tag in TIGHT else 2)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED:
            self._skip_depth = max(self._skip_depth - 1, 0)
            return
        if self._skip_depth or tag in VOID:
            return
        if self._pre is not None:
            if tag == "pre":
                self._end_pre()
            return
        if tag in ("ul", "ol", "menu"):
            if self._lists:
                self._lists.pop()
                self._marker = ""
            self._break(1 if self._lists else 2)
        elif tag == "blockquote":
            self._quote_depth = max(self._quote_depth - 1, 0)
            self._break(2)
        elif tag == "table":
            self._table_end()
        elif tag == "tr" and self._table_depth == 1:
            self._end_row()
        elif tag in CAPTURED:
            self._end_capture(tag)
        elif tag in BLOCKS or tag in TIGHT:
            self._break(1 if tag in TIGHT else 2)

    def handle_data(self, data: str) -> None:
        if self._skip_depth:
            return
        if self._pre is not None:
            self._pre.append(data)
            return
        self._inline(_SPACE.sub(" ", data))

    def close(self) -> None:
        super().close()
        if self._pre is not None:
            self._end_pre()
        while self._captures:
            self._end_capture(self._captures[-1].tag)
        self._end_row()

    # -- constructs -------------------------------------------------------------------------

    def _image(self, attributes: dict[str, str]) -> None:
        alt = _SPACE.sub(" ", attributes.get("alt", "")).strip()
        src = attributes.get("src", "").strip()
        if not alt:
            return  # decorative, or a picture the model cannot see anyway
        if src and not src.startswith("data:"):
            self._inline(f"![{alt}]({urljoin(self.base_url, src)})")
        else:
            self._inline(alt)

    def _list_item(self) -> None:
        if not self._lists:
            self._lists.append(_List(False))  # an <li> with no list: a list all the same
        current = self._lists[-1]
        self._break(1)
        if self._captures:
            return  # a list inside a link or cell: its items are just words
        if current.ordered:
            self._marker = f"{current.next_number}. "
            current.next_number += 1
        else:
            self._marker = "- "
        self._line_start = True

    def _end_capture(self, tag: str) -> None:
        names = [capture.tag for capture in self._captures]
        if tag not in names:
            return
        while self._captures:
            capture = self._captures.pop()
            self._finish_capture(capture)
            if capture.tag == tag:
                return

    def _finish_capture(self, capture: _Capture) -> None:
        raw = "".join(capture.parts)
        text = _SPACE.sub(" ", raw).strip()
        tag = capture.tag
        if tag == "title":
            self.title = self.title or text
            return
        if tag in ("td", "th"):
            if self._row is not None:
                self._row.append(text.replace("|", "\\|"))
            return
        if tag in HEADINGS:
            if text and self._captures:
                self._inline(f" {text} ")  # a heading inside a link or cell: just its text
            elif text:
                self._break(2)
                self._inline("#" * HEADINGS[tag] + " " + text)
                self._break(2)
            return
        lead = " " if raw[:1].isspace() else ""
        trail = " " if raw[-1:].isspace() else ""
        if not text:
            self._inline(lead or trail)
            return
        if tag == "a":
            wrapped = self._link(text, capture.href)
        elif tag == "code":
            fence = "``" if "`" in text else "`"
            pad = " " if fence == "``" else ""
            wrapped = f"{fence}{pad}{text}{pad}{fence}"
        else:
            mark = EMPHASIS[tag]
            wrapped = f"{mark}{text}{mark}"
        self._inline(lead + wrapped + trail)

    def _link(self, text: str, href: str) -> str:
        href = href.strip()
        if href.startswith("#") and text in _ANCHOR_MARKS:
            return ""  # a heading's permalink mark, not text
        if not href or href.startswith(("#", "javascript:", "data:")):
            return text
        target = urljoin(self.base_url, href).replace(" ", "%20").replace(")", "%29")
        label = text.replace("]", "\\]")
        return f"[{label}]({target})"

    def _end_pre(self) -> None:
        assert self._pre is not None
        text = "".join(self._pre)
        self._pre = None
        # HTML ignores a newline right after <pre>; trailing blank lines carry nothing.
        text = text.removeprefix("\r\n").removeprefix("\n").rstrip()
        if self._captures:
            self._inline(f"`{_SPACE.sub(' ', text).strip()}`" if text.strip() else "")
            return
        fence = "```"
        while fence in text:
            fence += "`"
        self._break(2)
        self._write_lines(f"{fence}{self._pre_language}\n{text}\n{fence}")
        self._break(2)

    def _table_start(self) -> None:
        self._table_depth += 1
        if self._table_depth == 1:
            self._break(2)
            self._rows_written = 0
            self._row = None
        else:
            self._inline(" ")

    def _table_end(self) -> None:
        if self._table_depth == 1:
            self._end_row()
            self._break(2)
        self._table_depth = max(self._table_depth - 1, 0)

    def _cell_start(self, tag: str) -> None:
        # An open cell ends where the next begins (`</td>` may be left out).
        for name in ("td", "th"):
            if any(capture.tag == name for capture in self._captures):
                self._end_capture(name)
        if self._row is None:
            self._row = []
        if tag == "th" and not self._row:
            self._row_has_header = True
        self._captures.append(_Capture(tag))

    def _end_row(self) -> None:
        for name in ("td", "th"):
            if any(capture.tag == name for capture in self._captures):
                self._end_capture(name)
        row, self._row = self._row, None
        if not row or not any(row):
            self._row_has_header = False
            return
        self._break(1)
        self._write("| " + " | ".join(row) + " |")
        if self._rows_written == 0 and self._row_has_header:
            self._break(1)
            self._write("|" + " --- |" * len(row))
        self._rows_written += 1
        self._row_has_header = False
        self._break(1)

    def result(self) -> Converted:
        text = "".join(self._out)
        text = _TRAILING_SPACE.sub("\n", text)
        text = _BLANK_LINES.sub("\n\n", text)
        return Converted(self.title, text.strip("\n").rstrip())


def _language(css_class: str) -> str:
    match = _LANGUAGE_CLASS.search(css_class)
    return match.group(1) if match else ""


def html_to_markdown(html: str, base_url: str = "") -> Converted:
    """The page's title and its text as markdown, links made absolute against `base_url`."""
    converter = _Converter(base_url)
    converter.feed(html)
    converter.close()
    return converter.result()
