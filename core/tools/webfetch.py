"""WebFetch: one web page, as markdown, fetched under the same rules as every other call.

The permission chain sees the URL's host (`DomainTarget`), so `WebFetch(domain:...)` rules
decide whether the first request may go. What the chain cannot see is where the server sends
the request next, so redirects are followed here by hand (at most `MAX_REDIRECTS`), and a hop
to a host not yet cleared in this call is checked against the rules again:

- a deny rule covering it ends the call with an error naming the rule;
- an allow rule covering it (and no ask rule) lets the hop go;
- anything else stops, and the model is told where the redirect leads, so that it can fetch
  that URL itself: a new call goes through the whole chain, hooks and the user included.

Nothing is upgraded from http to https: the permission rules are about hosts, not schemes,
and an upgrade would break the servers that only speak http (local ones, intranets, tests).

Every limit fails with a message saying what to do instead: the URL is checked before the
permission prompt; a body over `MAX_DOWNLOAD_BYTES` (declared or counted while streaming,
after decompression, so a small gzip cannot expand without bound) is refused; anything that
is not text (images, PDFs, archives) is refused by its content type before it is read; the
whole fetch has one deadline. Converted text beyond `MAX_CONTENT_CHARS` is cut with a note.

There is no second model here to answer `prompt` from the page, so the prompt is echoed
above the page's content and the model reads the page itself. The fetch runs as its own task
raced against the call's abort signal, so an interrupt closes the connection at once.
"""

from __future__ import annotations

import asyncio
import codecs
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx2
from pydantic import Field

from ..access.context import PermissionRule
from ..access.targets import DomainTarget, canonical_host
from ..permissions.call import prepare
from ..permissions.decide import allowed_by_rules, find_rule
from ..permissions.skill_scope import skill_refusal
from ..results import format_size
from ..tool import (
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolResult,
    ValidationResult,
    failure,
)
from .html_markdown import html_to_markdown

MAX_URL_LENGTH = 2000
MAX_REDIRECTS = 5
MAX_DOWNLOAD_BYTES = 10 * 1024 * 1024
MAX_CONTENT_CHARS = 100_000
DEFAULT_TIMEOUT_SECONDS = 30.0
USER_AGENT = "proctor-webfetch/1.0"
SNIFF_BYTES = 8192

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_APPLICATION_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/ecmascript"}
    | {"application/x-javascript", "application/yaml", "application/x-yaml", "application/toml"}
    | {"application/x-sh", "application/sql", "application/graphql", "application/x-ndjson"}
    | {"application/x-www-form-urlencoded", "application/x-tex", "application/x-python"}
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_LOOKS_LIKE_HTML = re.compile(
    rb"\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)
_UNSAFE_URL_CHARS = re.compile(r"[\x00-\x20\x7f]")
_WIDE_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)  # UTF-32 BOMs begin with these
_OTHER_SCHEMES = frozenset({"file", "ftp", "data", "mailto", "javascript", "about", "tel"})


class WebFetchInput(ToolInput):
    url: str = Field(description="The full http:// or https:// URL to fetch.")
    prompt: str = Field(
        description=(
            "What you are looking for on the page. It is shown above the page's content to "
            "keep the purpose of the fetch in view; the page itself is returned in full."
        )
    )


_PROMPT = f"""Fetches a web page and returns its content as markdown.

Usage:
- url must be a full http:// or https:// URL. It is fetched as given: http is not upgraded \
to https.
- prompt says what you are looking for. There is no separate model reading the page for \
you: the page's content comes back with your prompt above it, and you answer from it.
- HTML is converted to markdown (headings, paragraphs, links, lists, code, tables); scripts, \
styles and navigation are dropped. Plain text, JSON, XML and markdown come back as they are.
- Only text is fetched: images, PDFs, archives and other binary files are refused. To \
download such a file, use curl through the Bash tool.
- Pages over {format_size(MAX_DOWNLOAD_BYTES)} are refused, and content beyond \
{MAX_CONTENT_CHARS:,} characters is cut (a note says so).
- Up to {MAX_REDIRECTS} redirects are followed on the same host, or to hosts the permission \
rules allow. A redirect to any other host is not followed: you are told the new URL, and you \
fetch it with another WebFetch call.
- The fetch is read-only and may run alongside other read-only calls.
- Never put passwords or tokens in a URL, and do not fetch URLs the user would not expect \
you to visit."""


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """A page that was fetched: `ToolResult.data` of a successful call."""

    url: str
    final_url: str
    status: int
    content_type: str
    prompt: str
    content: str
    title: str = ""
    size: int = 0
    """Bytes of body received (after content decoding)."""
    converted: bool = False
    """Whether the content is HTML converted to markdown."""
    cut: int = 0
    """Characters of content left out at the end (0 when nothing was)."""
    elapsed_ms: int = 0


@dataclass(frozen=True, slots=True)
class RedirectNotice:
    """A redirect to another host that was not followed: the model fetches it itself."""

    url: str
    location: str
    status: int
    reason: str


class WebFetch(Tool[WebFetchInput, FetchedPage | RedirectNotice]):
    name = "WebFetch"
    headline_field = "url"
    subagents = "every"
    search_hint = "fetch web page url http content markdown"
    input_model = WebFetchInput
    description = "Fetches a URL and returns its content as markdown."
    interrupt_behavior = "cancel"
    max_result_size_chars = 100_000

    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    """The deadline for the whole fetch, redirects included (an attribute, for tests)."""
    trust_env: bool = True
    """Honour HTTP(S)_PROXY and NO_PROXY from the environment, as other clients do."""

    instructions = _PROMPT

    def is_read_only(self, input: WebFetchInput) -> bool:
        return True

    def is_concurrency_safe(self, input: WebFetchInput) -> bool:
        return True

    def rule_target(self, input: WebFetchInput, cwd: Path) -> DomainTarget | None:
        host = host_of(input.url)
        # No host, no target: the chain then asks about any domain rule instead of guessing.
        return DomainTarget(host) if host else None

    async def validate_input(self, input: WebFetchInput, context: ToolContext) -> ValidationResult:
        problem = input_problem(input)
        return ValidationResult.failed(problem) if problem else ValidationResult.passed()

    async def call(
        self, input: WebFetchInput, context: ToolContext, progress: Progress
    ) -> ToolResult[FetchedPage | RedirectNotice]:
        problem = input_problem(input)
        if problem:
            return failure(problem)
        if context.abort.aborted:
            return failure(f"The fetch of {input.url} was not started: {context.abort.reason}.")
        fetch = asyncio.ensure_future(self._fetch(input, context))
        aborted = asyncio.ensure_future(context.abort.wait())
        try:
            await asyncio.wait({fetch, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Cancelling the fetch closes its connection; wait for that before going on.
            for task in (fetch, aborted):
                task.cancel()
            await asyncio.wait({fetch, aborted})
        if fetch.cancelled() or not fetch.done():
            return failure(f"The fetch of {input.url} was stopped: {context.abort.reason}.")
        return fetch.result()

    def render(self, output: FetchedPage | RedirectNotice) -> ToolContent:
        return _redirect_text(output) if isinstance(output, RedirectNotice) else _page_text(output)

    # -- fetching ---------------------------------------------------------------------------

    async def _fetch(
        self, input: WebFetchInput, context: ToolContext
    ) -> ToolResult[FetchedPage | RedirectNotice]:
        """The whole fetch, every expected failure turned into an error result."""
        started = time.monotonic()
        url = input.url
        try:
            async with asyncio.timeout(self.timeout_seconds):
                async with httpx2.AsyncClient(
                    follow_redirects=False,
                    timeout=httpx2.Timeout(self.timeout_seconds),
                    headers={"User-Agent": USER_AGENT, "Accept": _ACCEPT},
                    trust_env=self.trust_env,
                ) as client:
                    result = await self._follow(client, input, context)
        except (TimeoutError, httpx2.TimeoutException):
            return failure(
                f"Fetching {url} timed out after {self.timeout_seconds:g} s. The server may be "
                "slow or unreachable: try again later, or try another page."
            )
        except httpx2.ConnectError as error:
            return failure(
                f"Could not connect to {host_of(url)}: {error or type(error).__name__}. Check "
                "the URL's host name and port; the site may be down."
            )
        except httpx2.HTTPError as error:
            return failure(f"Fetching {url} failed: {type(error).__name__}: {error}.")
        except (ValueError, UnicodeError) as error:  # a URL httpx2 cannot use after all
            return failure(f"{url} could not be fetched: {error}.")
        except Exception as error:  # the contract: an error result, never a raise
            return failure(f"Fetching {url} failed unexpectedly: {type(error).__name__}: {error}.")
        if isinstance(result.data, FetchedPage):
            elapsed = int((time.monotonic() - started) * 1000)
            result = ToolResult(data=replace(result.data, elapsed_ms=elapsed))
        return result

    async def _follow(
        self, client: httpx2.AsyncClient, input: WebFetchInput, context: ToolContext
    ) -> ToolResult[FetchedPage | RedirectNotice]:
        url = input.url
        cleared = {host_of(url)}
        for hop in range(MAX_REDIRECTS + 1):
            async with client.stream("GET", url) as response:
                # Not `is_redirect`, which is any 3xx: a 304 or 300 is not a redirect to follow.
                redirect = response.has_redirect_location
                location = response.headers.get("location") if redirect else None
                if location is None:
                    return await _page(response, input, url)
                status = response.status_code
            location = urljoin(url, location.strip())
            scheme = urlsplit(location).scheme.lower()
            if scheme not in ("http", "https"):
                return failure(
                    f"{url} redirects to {location}, which is not an http or https URL, so "
                    "WebFetch cannot follow it."
                )
            if hop == MAX_REDIRECTS:
                return failure(
                    f"{input.url} redirected more than {MAX_REDIRECTS} times (the last hop "
                    f"led to {location}). The site may be in a redirect loop; try the final "
                    "URL you want directly."
                )
            host = host_of(location)
            if host not in cleared:
                verdict = self._redirect_verdict(location, input.prompt, context)
                if isinstance(verdict, PermissionRule):
                    return failure(
                        f"{url} redirects to {location}, and fetching from {host} is denied "
                        f"by {verdict.describe()}. The redirect was not followed."
                    )
                if verdict:
                    return ToolResult(data=RedirectNotice(url, location, status, verdict))
                cleared.add(host)
            url = location
        raise AssertionError("unreachable: the loop returns on its last hop")

    def _redirect_verdict(
        self, location: str, prompt: str, context: ToolContext
    ) -> PermissionRule | str:
        """The deny rule covering a new host, why the hop needs a new call, or "" to follow.

        The same rule matching as the decision chain, through its own functions, so that a
        rule means the same thing for a redirect as for a first request."""
        host = host_of(location)
        permissions = context.permission_context
        call = prepare(self, WebFetchInput(url=location, prompt=prompt), context.cwd, permissions)
        if found := find_rule(call, "deny"):
            return found[0]
        if refused := skill_refusal(call, allowed_by_rules):
            # The hop is a new fetch: a running skill's allowed-tools must cover it too.
            return f"{refused.decided_by.detail} do not cover fetching from {host}"
        if found := find_rule(call, "ask"):
            return f"{found[0].describe()} asks before fetching from {host}"
        if allowed_by_rules(call):
            return ""
        return f"no permission rule allows fetching from {host}"


_ACCEPT = "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,*/*;q=0.5"


# -- the URL --------------------------------------------------------------------------------


def host_of(url: str) -> str:
    """The host the request will really go to, in one spelling, or "" when there is none.

    The HTTP client folds other spellings into the same host before it connects: dots
    written as `。` or `．`, upper case and Unicode labels (IDNA), and IPv4 addresses written
    as one number (`2130706433`), in short forms (`127.1`) or mapped into IPv6. A domain
    rule must see the host that is connected to, so every spelling is folded here too."""
    try:
        raw = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return canonical_host(raw)


def input_problem(input: WebFetchInput) -> str | None:
    """Why this input cannot be fetched, before anyone is asked about it, or None."""
    url = input.url
    if not url.strip():
        return "url is empty. Give the full URL to fetch, starting with https:// or http://."
    if len(url) > MAX_URL_LENGTH:
        return f"url is {len(url):,} characters long; at most {MAX_URL_LENGTH:,} are accepted."
    if _UNSAFE_URL_CHARS.search(url):
        return (
            f"url {url!r} contains spaces or control characters. Percent-encode them "
            "(a space is %20), or remove the surrounding whitespace."
        )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as error:
        return f"url {url!r} is not a valid URL: {error}."
    scheme = parts.scheme.lower()
    if "://" not in url and scheme not in _OTHER_SCHEMES:
        return f"url {url!r} has no scheme. Give the full URL, e.g. 'https://{url}'."
    if scheme not in ("http", "https"):
        return (
            f"url {url!r} is a {scheme}: URL; WebFetch only fetches http and https URLs. "
            "For local files use the Read tool."
        )
    if not parts.hostname:
        return f"url {url!r} has no host name. Give the full URL, e.g. 'https://example.com/'."
    if parts.username is not None or parts.password is not None:
        return (
            "url contains a user name or password. Credentials in URLs are refused: they would "
            "be sent to the server and kept in the transcript. Fetch the URL without them."
        )
    if not input.prompt.strip():
        return "prompt is empty. Say what you are looking for on the page."
    return None


# -- the response ---------------------------------------------------------------------------


async def _page(
    response: httpx2.Response, input: WebFetchInput, url: str
) -> ToolResult[FetchedPage | RedirectNotice]:
    """The page from a final (not redirecting) response, or why it cannot be given."""
    status = response.status_code
    if not 200 <= status < 300:
        return failure(_status_problem(url, status, response.reason_phrase))
    content_type = response.headers.get("content-type", "")
    media_type = content_type.split(";")[0].strip().lower()
    if media_type and not _is_text(media_type):
        return failure(
            f"{url} is {media_type}, not text; WebFetch only reads web pages and text. To "
            "download it, use curl through the Bash tool, e.g. `curl -L -o /tmp/file URL`."
        )
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_DOWNLOAD_BYTES:
        return failure(_too_large(url, f"{format_size(int(declared))}"))
    body = await _read_capped(response.aiter_bytes())
    if body is None:
        return failure(_too_large(url, f"more than {format_size(MAX_DOWNLOAD_BYTES)}"))
    if b"\x00" in body[:SNIFF_BYTES] and not body.startswith(_WIDE_BOMS):
        return failure(
            f"{url} sent binary data (labelled {media_type or 'with no content type'}), not "
            "text. To download it, use curl through the Bash tool."
        )
    is_html = media_type in _HTML_TYPES or (not media_type and bool(_LOOKS_LIKE_HTML.match(body)))
    text = body.decode(_charset(content_type, body, is_html), errors="replace")
    final_url = str(response.url)
    title = ""
    if is_html:
        converted = await asyncio.to_thread(html_to_markdown, text, final_url)
        text, title = converted.markdown, converted.title
    content, cut = _cap(text)
    return ToolResult(
        data=FetchedPage(
            input.url,
            final_url,
            status,
            media_type or ("text/html" if is_html else "text/plain"),
            input.prompt,
            content,
            title,
            len(body),
            is_html,
            cut,
        )
    )


def _is_text(media_type: str) -> bool:
    if media_type in _HTML_TYPES or media_type.startswith("text/"):
        return True
    if media_type in _TEXT_APPLICATION_TYPES:
        return True
    return media_type.startswith("application/") and media_type.endswith(("+json", "+xml"))


async def _read_capped(chunks: AsyncIterator[bytes]) -> bytes | None:
    """The whole body, or None as soon as it passes MAX_DOWNLOAD_BYTES."""
    received = bytearray()
    async for chunk in chunks:
        received += chunk
        if len(received) > MAX_DOWNLOAD_BYTES:
            return None
    return bytes(received)


def _charset(content_type: str, body: bytes, is_html: bool) -> str:
    """The body's encoding: a BOM, the header's charset, a <meta> charset, else UTF-8."""
    for bom, codec in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if body.startswith(bom):
            return codec
    candidates: list[str] = []
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            candidates.append(value.strip().strip("\"'"))
    if is_html and (match := _META_CHARSET.search(body[:SNIFF_BYTES])):
        candidates.append(match.group(1).decode("ascii", "replace"))
    for candidate in candidates:
        try:
            return codecs.lookup(candidate).name
        except LookupError:
            continue  # an unknown label: try the next source rather than fail
    return "utf-8"


def _cap(text: str) -> tuple[str, int]:
    """`text` cut to MAX_CONTENT_CHARS, at a line break when one is near, and what was cut."""
    if len(text) <= MAX_CONTENT_CHARS:
        return text, 0
    cut_at = text.rfind("\n", MAX_CONTENT_CHARS - 2000, MAX_CONTENT_CHARS)
    cut_at = cut_at if cut_at > 0 else MAX_CONTENT_CHARS
    return text[:cut_at], len(text) - cut_at


def _status_problem(url: str, status: int, reason: str) -> str:
    said = f"{url} answered HTTP {status}{' ' + reason if reason else ''}"
    if status in (401, 403, 407):
        return f"{said}: the page needs an authorisation WebFetch cannot give. Ask the user."
    if status in (404, 410):
        return f"{said}: there is no such page. Check the URL, or look for the page elsewhere."
    if status == 429 or status >= 500:
        return f"{said}: the server is busy or failing. Try again later."
    if 300 <= status < 400:
        return (
            f"{said}: not a page, and not a redirect WebFetch can follow (those are 301, 302, "
            "303, 307 and 308 with a Location header)."
        )
    return f"{said}, so there is no page to return."


def _too_large(url: str, size: str) -> str:
    return (
        f"{url} is {size}, more than WebFetch reads ({format_size(MAX_DOWNLOAD_BYTES)}). "
        "Fetch a smaller page, or download it with curl through the Bash tool and read "
        "parts of it."
    )


# -- what the model reads -------------------------------------------------------------------


def _page_text(page: FetchedPage) -> str:
    lines = [f"Fetched {page.final_url} (HTTP {page.status}, {page.content_type})."]
    if page.final_url != page.url:
        lines.append(f"Redirected from {page.url}.")
    if page.converted:
        lines.append("The HTML was converted to markdown.")
    lines.append(f"Your prompt: {page.prompt}")
    lines.append("(Answer it from the page's content below; no one else has read it.)")
    if page.title:
        lines.append(f"Title: {page.title}")
    body = page.content if page.content.strip() else "(The page has no text content.)"
    text = "\n".join(lines) + f"\n\n<page>\n{body}\n</page>"
    if page.cut:
        text += (
            f"\n(The content was cut here: {page.cut:,} more characters were left out. The "
            "rest of this page cannot be fetched with WebFetch; look for a more specific page, "
            "or download it with curl through the Bash tool.)"
        )
    return text


def _redirect_text(notice: RedirectNotice) -> str:
    return (
        f"{notice.url} redirects (HTTP {notice.status}) to another host: {notice.location}\n"
        f"The redirect was not followed because {notice.reason}. If that URL is what you "
        "want, call WebFetch again with it as the url (it will go through the permission "
        "checks like any other fetch)."
    )
