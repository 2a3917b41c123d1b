"""WebFetch against a real HTTP server on the loopback interface, and the HTML converter.

The server runs in a thread on 127.0.0.1 and answers from a table of routes; nothing here
touches the internet. `localhost` names the same server under another host name, which is
what the redirect checks need: a hop from 127.0.0.1 to localhost is a hop to another host.

The tests assert that a timeout or an abort ends a fetch, never how fast: that is measured
by bench/bench_cancel.py (`webfetch_abort_ms`, `webfetch_timeout_overrun_ms`).
"""

from __future__ import annotations

import asyncio
import gzip
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import HANG_BOUND_S, ScriptedPort, eventually, make_context

from core.abort import AbortController
from core.access.context import PermissionRule, RuleBehavior, ToolPermissionContext
from core.access.targets import DomainTarget
from core.executor import ExecutorServices, ToolCall, ToolCallOutcome, run_tool_use
from core.tool import ToolContext
from core.tools import webfetch
from core.tools.html_markdown import html_to_markdown
from core.tools.webfetch import (
    FetchedPage,
    RedirectNotice,
    WebFetch,
    WebFetchInput,
)

# -- the local server -----------------------------------------------------------------------


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    hold: bool = False
    """Answer only once the test is over: the request can end only by the client's doing."""
    length: bool = True
    """Send Content-Length (else the body ends when the connection closes)."""


class Server:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: list[tuple[str, str]] = []
        self.held = threading.Event()
        """Set once a request to a `hold` route has arrived."""
        self.over = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def route(self, path: str, body: str | bytes = b"", **options: Any) -> str:
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = Route(data, **options)
        return self.url(path)

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        return self.route(path, status=status, headers={"Location": location})


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            host = self.headers.get("Host", "").split(":")[0]
            server.hits.append((host, self.path))
            route = server.routes.get(self.path)
            if route is None:
                route = Route(b"no such page", 404, {"Content-Type": "text/plain"})
            if route.hold:
                server.held.set()
                server.over.wait(HANG_BOUND_S)
            try:
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                if route.length:
                    self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                self.wfile.write(route.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away: what cancellation tests want

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler


@pytest.fixture
def server() -> Iterator[Server]:
    local = Server()
    thread = threading.Thread(target=local.httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield local
    finally:
        local.over.set()
        local.httpd.shutdown()
        local.httpd.server_close()


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    # A proxy from the environment would take loopback requests off the machine.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("all_proxy", raising=False)


HTML = "text/html; charset=utf-8"
TEXT = "text/plain; charset=utf-8"


def rules(*specs: tuple[RuleBehavior, str]) -> ToolPermissionContext:
    parsed = tuple(
        PermissionRule("WebFetch", content, behavior, source="test") for behavior, content in specs
    )
    return ToolPermissionContext(rules=parsed)


def context(
    permissions: ToolPermissionContext | None = None, abort: AbortController | None = None
) -> ToolContext:
    return make_context([WebFetch()], permission_context=permissions, abort=abort)


async def fetch(
    url: str,
    prompt: str = "what is on the page",
    ctx: ToolContext | None = None,
    tool: WebFetch | None = None,
) -> tuple[Any, str, bool]:
    """Call the tool directly (permission already given): its data, block text, is_error."""
    tool = tool or WebFetch()
    ctx = ctx or context()
    input = WebFetchInput(url=url, prompt=prompt)
    validation = await tool.validate_input(input, ctx)
    assert validation.ok, validation.message
    result = await tool.call(input, ctx, lambda _progress: None)
    block = tool.result_block(result, "toolu_1")
    content = block["content"]
    assert isinstance(content, str)
    assert block.get("is_error", False) == result.is_error
    return result.data, content, result.is_error


async def run(ctx: ToolContext, **input: Any) -> ToolCallOutcome:
    services = ExecutorServices(permission_port=ScriptedPort())
    return await run_tool_use(ToolCall("toolu_1", "WebFetch", input), services, ctx)


def text_of(outcome: ToolCallOutcome) -> str:
    content = outcome.block["content"]
    assert isinstance(content, str)
    return content


# -- pages ----------------------------------------------------------------------------------


PAGE = """<!doctype html>
<html><head><title>Release notes</title>
<style>body { color: red }</style><script>document.write("<p>from script</p>")</script>
</head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<h1>Version 2.0</h1>
<p>The <strong>big</strong> change: see <a href="/docs/upgrade.html">the upgrade guide</a>.</p>
<ul><li>Faster</li><li>Smaller</li></ul>
<pre><code class="language-python">import x
x.run()
</code></pre>
</body></html>"""


async def test_html_comes_back_as_markdown_with_the_prompt_above_it(server: Server) -> None:
    url = server.route("/notes", PAGE, headers={"Content-Type": HTML})
    page, text, is_error = await fetch(url, prompt="what changed in 2.0?")
    assert not is_error, text
    assert isinstance(page, FetchedPage)
    assert page.converted and page.title == "Release notes" and page.status == 200
    assert page.content_type == "text/html"
    assert "# Version 2.0" in page.content
    assert "The **big** change" in page.content
    assert f"[the upgrade guide]({server.url('/docs/upgrade.html')})" in page.content
    assert "- Faster\n- Smaller" in page.content
    assert "```python\nimport x\nx.run()\n```" in page.content
    for dropped in ("color: red", "from script", "About"):
        assert dropped not in page.content
    assert "Your prompt: what changed in 2.0?" in text
    assert text.index("Your prompt") < text.index("# Version 2.0")
    assert "Title: Release notes" in text and f"Fetched {url}" in text


async def test_plain_text_and_json_come_back_as_they_are(server: Server) -> None:
    body = "line one\n  indented <b>not html</b>\n"
    page, _, is_error = await fetch(server.route("/t", body, headers={"Content-Type": TEXT}))
    assert not is_error and isinstance(page, FetchedPage)
    assert page.content == body and not page.converted
    doc = '{"a": [1, 2], "b": "<p>"}'
    json_url = server.route("/j", doc, headers={"Content-Type": "application/vnd.api+json"})
    page, _, is_error = await fetch(json_url)
    assert not is_error and page.content == doc


async def test_the_charset_comes_from_the_header_or_the_meta_tag(server: Server) -> None:
    latin = "café crème".encode("latin-1")
    url = server.route("/l", latin, headers={"Content-Type": "text/plain; charset=ISO-8859-1"})
    page, _, _ = await fetch(url)
    assert page.content == "café crème"
    html = '<html><head><meta charset="windows-1252"></head><body><p>“quoted” €5</p>'
    url = server.route("/m", html.encode("cp1252"), headers={"Content-Type": "text/html"})
    page, _, _ = await fetch(url)
    assert page.content == "“quoted” €5"
    # No charset anywhere and bytes that are not UTF-8: replaced, not an error.
    url = server.route("/u", b"ok \xff\xfe end", headers={"Content-Type": "text/plain"})
    page, _, is_error = await fetch(url)
    assert not is_error and page.content == "ok \ufffd\ufffd end"


async def test_a_page_without_content_type_is_sniffed(server: Server) -> None:
    page, _, is_error = await fetch(server.route("/h", "<!DOCTYPE html><p>Hello <em>you</em>"))
    assert not is_error and page.converted and page.content == "Hello *you*"
    page, _, _ = await fetch(server.route("/p", "just words"))
    assert not page.converted and page.content == "just words"


async def test_gzip_is_decoded(server: Server) -> None:
    body = gzip.compress(b"<p>zipped</p>")
    headers = {"Content-Type": HTML, "Content-Encoding": "gzip"}
    page, _, is_error = await fetch(server.route("/z", body, headers=headers))
    assert not is_error and page.content == "zipped"


async def test_long_content_is_cut_with_a_note(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webfetch, "MAX_CONTENT_CHARS", 3000)
    body = "".join(f"line {n}\n" for n in range(1000))
    page, text, is_error = await fetch(server.route("/long", body, headers={"Content-Type": TEXT}))
    assert not is_error
    assert 2000 < len(page.content) <= 3000 and body.startswith(page.content)
    assert body[len(page.content)] == "\n"  # cut at a line break
    assert page.cut == len(body) - len(page.content)
    assert f"{page.cut:,} more characters were left out" in text


async def test_an_empty_page_says_so(server: Server) -> None:
    url = server.route("/e", "<script>x()</script>", headers={"Content-Type": HTML})
    _, text, is_error = await fetch(url)
    assert not is_error and "(The page has no text content.)" in text


# -- what is refused ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("image/png", b"\x89PNG\r\n\x1a\n\x00\x00"),
        ("application/pdf", b"%PDF-1.7\n"),
        ("application/octet-stream", b"\x00\x01\x02"),
        ("video/mp4", b"...."),
    ],
)
async def test_binary_content_types_are_refused_before_reading(
    server: Server, content_type: str, body: bytes
) -> None:
    url = server.route("/bin", body, headers={"Content-Type": content_type})
    data, text, is_error = await fetch(url)
    assert is_error and data == text.removeprefix("<tool_use_error>").removesuffix(
        "</tool_use_error>"
    )
    assert f"is {content_type}, not text" in text and "curl" in text


async def test_binary_bytes_labelled_as_text_are_refused(server: Server) -> None:
    url = server.route("/fake", b"abc\x00\x01\x02def", headers={"Content-Type": TEXT})
    _, text, is_error = await fetch(url)
    assert is_error and "sent binary data" in text


@pytest.mark.parametrize(("status", "advice"), [(404, "no such page"), (503, "Try again later")])
async def test_an_error_status_is_an_error_result(server: Server, status: int, advice: str) -> None:
    url = server.route("/s", "oops", status=status, headers={"Content-Type": TEXT})
    _, text, is_error = await fetch(url)
    assert is_error and f"answered HTTP {status}" in text and advice in text


async def test_a_declared_length_over_the_cap_is_refused_unread(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webfetch, "MAX_DOWNLOAD_BYTES", 1000)
    url = server.route("/big", "x" * 5000, headers={"Content-Type": TEXT})
    _, text, is_error = await fetch(url)
    assert is_error and "more than WebFetch reads" in text and "is 4." in text


async def test_a_stream_over_the_cap_is_cut_off(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webfetch, "MAX_DOWNLOAD_BYTES", 1000)
    url = server.route("/stream", "y" * 50_000, headers={"Content-Type": TEXT}, length=False)
    _, text, is_error = await fetch(url)
    assert is_error and "is more than" in text and "more than WebFetch reads" in text


async def test_a_server_that_is_not_there_is_an_error(server: Server) -> None:
    port = server.port
    server.httpd.shutdown()
    server.httpd.server_close()
    _, text, is_error = await fetch(f"http://127.0.0.1:{port}/gone")
    assert is_error and "Could not connect to 127.0.0.1" in text


async def test_a_slow_server_times_out(server: Server) -> None:
    url = server.route("/slow", "late", hold=True, headers={"Content-Type": TEXT})
    tool = WebFetch()
    tool.timeout_seconds = 0.2
    # The server answers only after the test: the fetch ends only by its timeout.
    _, text, is_error = await asyncio.wait_for(fetch(url, tool=tool), HANG_BOUND_S)
    assert is_error and "timed out after 0.2 s" in text


# -- redirects ------------------------------------------------------------------------------


async def test_same_host_redirects_are_followed(server: Server) -> None:
    server.route("/final", "arrived", headers={"Content-Type": TEXT})
    server.redirect("/two", "/final", status=301)
    first = server.redirect("/one", server.url("/two"), status=307)
    page, text, is_error = await fetch(first)
    assert not is_error and page.content == "arrived"
    assert page.final_url == server.url("/final") and page.url == first
    assert f"Redirected from {first}" in text
    assert [path for _, path in server.hits] == ["/one", "/two", "/final"]


async def test_too_many_redirects_is_an_error(server: Server) -> None:
    for n in range(10):
        server.redirect(f"/r{n}", f"/r{n + 1}")
    _, text, is_error = await fetch(server.url("/r0"))
    assert is_error and "redirected more than 5 times" in text
    assert len(server.hits) == 6


async def test_a_redirect_loop_ends(server: Server) -> None:
    server.redirect("/a", "/b")
    server.redirect("/b", "/a")
    _, text, is_error = await fetch(server.url("/a"))
    assert is_error and "redirect loop" in text


async def test_a_redirect_to_another_host_is_handed_back(server: Server) -> None:
    target = server.url("/elsewhere", host="localhost")
    start = server.redirect("/go", target)
    data, text, is_error = await fetch(start)
    assert not is_error
    assert isinstance(data, RedirectNotice) and data.location == target and data.status == 302
    assert f"to another host: {target}" in text and "call WebFetch again" in text
    assert "no permission rule allows fetching from localhost" in text
    assert server.hits == [("127.0.0.1", "/go")]


async def test_a_redirect_to_a_denied_host_is_an_error_naming_the_rule(server: Server) -> None:
    start = server.redirect("/go", server.url("/x", host="localhost"))
    ctx = context(rules(("allow", "domain:localhost"), ("deny", "domain:localhost")))
    _, text, is_error = await fetch(start, ctx=ctx)
    assert is_error and "WebFetch(domain:localhost)" in text and "deny rule" in text
    assert len(server.hits) == 1


async def test_a_redirect_to_an_allowed_host_is_followed(server: Server) -> None:
    server.route("/there", "made it", headers={"Content-Type": TEXT})
    start = server.redirect("/go", server.url("/there", host="localhost"))
    page, _, is_error = await fetch(start, ctx=context(rules(("allow", "domain:localhost"))))
    assert not is_error and isinstance(page, FetchedPage) and page.content == "made it"
    assert server.hits == [("127.0.0.1", "/go"), ("localhost", "/there")]


async def test_an_ask_rule_stops_a_redirect_even_with_an_allow_rule(server: Server) -> None:
    start = server.redirect("/go", server.url("/x", host="localhost"))
    ctx = context(rules(("allow", "domain:localhost"), ("ask", "domain:localhost")))
    data, text, _ = await fetch(start, ctx=ctx)
    assert isinstance(data, RedirectNotice) and "asks before fetching from localhost" in text


@pytest.mark.parametrize("status", [300, 304])
async def test_other_3xx_answers_are_not_followed(server: Server, status: int) -> None:
    server.route("/there", "no", headers={"Content-Type": TEXT})
    url = server.route("/here", status=status, headers={"Location": "/there"})
    _, text, is_error = await fetch(url)
    assert is_error and f"answered HTTP {status}" in text and "not a redirect" in text
    assert [path for _, path in server.hits] == ["/here"]


async def test_a_redirect_without_location_is_an_error(server: Server) -> None:
    _, text, is_error = await fetch(server.route("/nowhere", status=302))
    assert is_error and "answered HTTP 302" in text


async def test_a_redirect_to_another_scheme_is_refused(server: Server) -> None:
    _, text, is_error = await fetch(server.redirect("/f", "file:///etc/passwd"))
    assert is_error and "not an http or https URL" in text


# -- cancellation ---------------------------------------------------------------------------


async def test_an_abort_stops_the_request(server: Server) -> None:
    url = server.route("/slow", "late", hold=True, headers={"Content-Type": TEXT})
    controller = AbortController()
    ctx = context(abort=controller)
    tool = WebFetch()
    call = asyncio.create_task(tool.call(WebFetchInput(url=url, prompt="p"), ctx, lambda _p: None))
    await eventually(server.held.is_set, "the request's arrival")
    controller.abort("user_interrupted")
    # The server answers only after the test: the call ends only because of the abort.
    result = await asyncio.wait_for(call, HANG_BOUND_S)
    assert result.is_error and "was stopped: user_interrupted" in result.data


async def test_cancelling_the_task_cancels_the_request(server: Server) -> None:
    url = server.route("/slow", "late", hold=True, headers={"Content-Type": TEXT})
    tool = WebFetch()
    call = asyncio.create_task(
        tool.call(WebFetchInput(url=url, prompt="p"), context(), lambda _p: None)
    )
    await eventually(server.held.is_set, "the request's arrival")
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(call, HANG_BOUND_S)
    leftovers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert not leftovers


# -- through the engine ---------------------------------------------------------------------


async def test_through_the_engine_with_approval(server: Server) -> None:
    url = server.route("/ok", "<h2>Hi</h2>", headers={"Content-Type": HTML})
    outcome = await run(context(), url=url, prompt="greeting?")
    assert not outcome.is_error, text_of(outcome)
    assert "## Hi" in text_of(outcome)


async def test_a_deny_rule_for_the_host_stops_the_first_request(server: Server) -> None:
    url = server.route("/ok", "hi", headers={"Content-Type": TEXT})
    outcome = await run(context(rules(("deny", "domain:127.0.0.1"))), url=url, prompt="p")
    assert outcome.is_error and "WebFetch(domain:127.0.0.1)" in text_of(outcome)
    assert server.hits == []


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("ftp://example.com/file", "only fetches http and https"),
        ("file:///etc/passwd", "only fetches http and https"),
        ("example.com/page", "has no scheme"),
        ("https://user:secret@example.com/", "user name or password"),
        ("https://exa mple.com/", "spaces or control characters"),
        ("https:///path-only", "has no host name"),
        ("http://example.com:port/", "not a valid URL"),
        ("", "url is empty"),
        ("https://example.com/" + "a" * 3000, "at most 2,000"),
    ],
)
async def test_bad_urls_are_refused_before_permission(url: str, expected: str) -> None:
    outcome = await run(context(), url=url, prompt="p")
    assert outcome.is_error and expected in text_of(outcome), text_of(outcome)


async def test_an_empty_prompt_and_wrong_types_are_refused() -> None:
    outcome = await run(context(), url="https://example.com/", prompt="  ")
    assert outcome.is_error and "prompt is empty" in text_of(outcome)
    outcome = await run(context(), url=42, prompt="p")
    assert outcome.is_error and "url" in text_of(outcome)
    outcome = await run(context(), url="https://example.com/")
    assert outcome.is_error and "prompt" in text_of(outcome)


def test_the_tool_describes_itself() -> None:
    tool = WebFetch()
    input = WebFetchInput(url="https://Docs.Example.com/a?b=1", prompt="p")
    assert tool.rule_target(input, Path("/")) == DomainTarget("docs.example.com")
    assert tool.is_read_only(input) and tool.is_concurrency_safe(input)
    assert tool.interrupt_behavior == "cancel"
    assert set(tool.input_json_schema()["required"]) == {"url", "prompt"}
    assert "Claude" not in tool.prompt(make_context([]).options)


# -- the converter --------------------------------------------------------------------------


def test_converter_links_lists_and_whitespace() -> None:
    html = """<p>  Many
        spaces   here <a href="b.html">rel</a> <a href="#top">anchor</a>
        <a href="javascript:void(0)">js</a> <a href="/x"></a></p>
    <ol start="3"><li>three<li>four<ul><li>nested</ul></ol>
    <p>after<br>break</p>"""
    result = html_to_markdown(html, "https://example.com/dir/page.html")
    assert result.markdown == (
        "Many spaces here [rel](https://example.com/dir/b.html) anchor js\n\n"
        "3. three\n4. four\n  - nested\n\n"
        "after\nbreak"
    )


def test_converter_tables_quotes_code_and_images() -> None:
    html = """<table><thead><tr><th>Name</th><th>Note</th></tr></thead>
    <tr><td>a|b</td><td><b>bold</b></td></tr><tr><td>c<td>d</table>
    <blockquote><p>one</p><p>two</p></blockquote>
    <p>Use <code>a`b</code> or <code>x</code>.</p>
    <pre>```
fenced
```</pre>
    <img src="/p.png" alt="A chart"><img src="/spacer.gif">"""
    result = html_to_markdown(html, "https://example.com/")
    assert result.markdown == (
        "| Name | Note |\n| --- | --- |\n| a\\|b | **bold** |\n| c | d |\n\n"
        "> one\n>\n> two\n\n"
        "Use `` a`b `` or `x`.\n\n"
        "````\n```\nfenced\n```\n````\n\n"
        "![A chart](https://example.com/p.png)"
    )


def test_converter_definitions_and_permalinks() -> None:
    html = '<h3>Setup<a class="headerlink" href="#setup">¶</a></h3><dl><dt>Term<dd>Meaning</dl>'
    assert html_to_markdown(html).markdown == "### Setup\n\nTerm\nMeaning"


def test_converter_survives_broken_html() -> None:
    html = "<h2>Title <a href='/x'>link</h2><p>para <b>bold <i>both</b> after<div>unclosed"
    result = html_to_markdown(html, "https://e.com/")
    assert result.markdown == (
        "## Title [link](https://e.com/x)\n\npara **bold *both*** after\n\nunclosed"
    )
    assert html_to_markdown("</p></div></a>text<", "").markdown == "text<"
    assert html_to_markdown("", "").markdown == ""


async def test_a_running_skill_stops_a_redirect_its_allowed_tools_do_not_cover(
    server: Server,
) -> None:
    # The person allows localhost; the skill lists only 127.0.0.1: a redirect there must not
    # be followed while the skill narrows the turn (red team: the hop skipped the scope).
    from core.access.context import SkillScope

    start = server.redirect("/go", server.url("/x", host="localhost"))
    scope = SkillScope(
        "fetcher", (PermissionRule("WebFetch", "domain:127.0.0.1", "allow", source="skill"),)
    )
    permissions = rules(("allow", "domain:localhost"), ("allow", "domain:127.0.0.1"))
    ctx = context(replace(permissions, skill_scopes=(scope,)))
    data, text, _ = await fetch(start, ctx=ctx)
    assert isinstance(data, RedirectNotice) and "the skill 'fetcher'" in text
    assert server.hits == [("127.0.0.1", "/go")]
