"""Parse a Bash command with tree-sitter into simple commands and structural facts.

The walk is deliberately a whitelist: every node type it meets must be one it knows,
and the structural facts the classifier needs (substitutions, expansions, background
jobs, constructs that are not plain command lists) are collected in the same single
pass, because the benchmark asks for thousands of classifications a second.

Words are turned into argv by quote removal only. Anything Bash would still change at
run time (parameter, arithmetic or brace expansion, `$"..."` translation) makes the word
non-static, and then the whole argv is None: a caller can never be handed a word that
means something else when Bash runs it. Globs stay literal text, and so does a leading
`~`, which callers expand as the home directory (such a command is never read-only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from core.bash.grammar import (
    BRACE,
    EXPANSIONS,
    EXPRESSION,
    FORBIDDEN,
    HARMLESS_TARGETS,
    READ_ONLY_CONTAINERS,
    REDIRECTS,
    STATEMENTS,
    SUBSTITUTIONS,
    ansi_c,
    unquote_double,
)

MAX_SUBCOMMANDS = 50

_LANGUAGE = Language(tree_sitter_bash.language())
_PARSER = Parser(_LANGUAGE)


@dataclass(frozen=True, slots=True)
class Redirect:
    operator: str
    target: str | None
    writes: bool


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    text: str
    argv: tuple[str, ...] | None
    assignments: tuple[str, ...]
    redirects: tuple[Redirect, ...]
    wild: bool = False
    """Some word has an unquoted glob character (`*`, `?`, `[`): Bash may replace it with
    the names of files, so the text is not the path (core/permissions/globs.py)."""


@dataclass(slots=True)
class Walk:
    """What one pass over the tree found; `problems` are reasons, first one wins."""

    source: bytes
    commands: list[SimpleCommand] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    # Per command: argv positions whose unquoted text starts with a glob character, so
    # the glob could expand to a file name that starts with `-` and reads as a flag.
    globs: list[frozenset[int]] = field(default_factory=list)
    syntax_error: str = ""
    unknown: str = ""
    has_substitution: bool = False
    # Reasons the command is not read-only for structural (not per-command) causes.
    problems: list[str] = field(default_factory=list)

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")


_PLACEHOLDER = SimpleCommand("", (), (), ())


def forbidden_character(command: str) -> str | None:
    match = FORBIDDEN.search(command)
    return None if match is None else f"U+{ord(match.group()):04X}"


def parse(command: str) -> Walk:
    source = command.encode("utf-8", "surrogatepass")
    walk = Walk(source)
    root = _PARSER.parse(source).root_node
    if root.has_error:
        walk.syntax_error = _error_text(walk, root)
    _statement(walk, root, ())
    # Nested commands (substitutions, here-doc pipelines) are found while their outer
    # command is being built; source order is restored by start offset.
    order = sorted(range(len(walk.commands)), key=walk.starts.__getitem__)
    walk.commands = [walk.commands[i] for i in order]
    walk.globs = [walk.globs[i] for i in order]
    return walk


def _error_text(walk: Walk, root: Node) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            return f"missing `{node.type}`"
        if node.type == "ERROR":
            return f"syntax error near `{walk.text(node).strip()[:40]}`"
        if node.has_error:
            stack.extend(reversed(node.children))
    return "syntax error"


def _statement(walk: Walk, node: Node, inherited: tuple[Redirect, ...]) -> None:
    kind = node.type
    if kind == "command":
        _command(walk, node, node, inherited)
        return
    if kind in ("declaration_command", "unset_command"):
        _declaration(walk, node, inherited)
        walk.problems.append(f"`{walk.text(node)}` changes shell variables")
        return
    if kind == "variable_assignment" or kind == "variable_assignments":
        _command(walk, node, node, inherited)
        walk.problems.append(f"the assignment `{walk.text(node)}` changes a shell variable")
        return
    if kind == "redirected_statement":
        body = None
        found: list[Redirect] = []
        for child in node.children:
            if child.type in REDIRECTS:
                found.append(_redirect(walk, child))
            elif child.is_named and child.type != "comment" and body is None:
                body = child
        redirects = tuple(found)
        if body is not None and body.type == "command":
            _command(walk, body, node, inherited + redirects)
        elif body is not None:
            _statement(walk, body, inherited + redirects)
        return
    if kind in STATEMENTS:
        if kind not in READ_ONLY_CONTAINERS:
            walk.problems.append(f"the {kind.replace('_', ' ')} `{_short(walk, node)}`")
        for child in node.children:
            if child.is_named:
                _statement(walk, child, inherited)
            elif child.type == "&":
                walk.problems.append(f"`{_short(walk, node)}` runs a command in the background")
        return
    if kind == "test_command":
        _test_command(walk, node, inherited)
        return
    if kind == "comment":
        return
    if kind in EXPRESSION:
        # `((x++))` and stray words at statement level: arithmetic can assign variables.
        walk.problems.append(f"the expression `{_short(walk, node)}` is not a plain command")
        _words(walk, node, in_argv=True)
        return
    if kind not in ("ERROR",):
        walk.unknown = walk.unknown or kind
    for child in node.children:
        if child.is_named:
            _statement(walk, child, inherited)


def _short(walk: Walk, node: Node) -> str:
    text = walk.text(node)
    return text if len(text) <= 60 else text[:57] + "..."


def _declaration(walk: Walk, node: Node, inherited: tuple[Redirect, ...]) -> None:
    """`export A=1 B`: the keyword and its operands are argv (they are not leading assignments)."""
    slot = len(walk.commands)
    walk.commands.append(_PLACEHOLDER)
    walk.starts.append(node.start_byte)
    walk.globs.append(frozenset())
    argv: list[str] | None = []
    for child in node.children:
        if not child.is_named:
            if argv is not None:
                argv.append(walk.text(child))
            continue
        if child.type == "variable_name":
            value: str | None = walk.text(child)
        elif child.type == "variable_assignment":
            _words(walk, child, in_argv=True)
            value = walk.text(child) if _is_static(walk, child) else None
        else:
            value = _word(walk, child)
        if value is None:
            argv = None
        elif argv is not None:
            argv.append(value)
    walk.commands[slot] = SimpleCommand(
        walk.text(node), None if argv is None else tuple(argv), (), inherited
    )


def _is_static(walk: Walk, node: Node) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if (
            current.type
            not in (
                "variable_assignment",
                "variable_name",
                "word",
                "number",
                "raw_string",
                "string",
                "string_content",
            )
            and current.is_named
        ):
            return False
        stack.extend(current.children)
    return True


def _command(walk: Walk, node: Node, outer: Node, inherited: tuple[Redirect, ...]) -> None:
    slot = len(walk.commands)
    walk.commands.append(_PLACEHOLDER)
    walk.starts.append(outer.start_byte)
    walk.globs.append(frozenset())
    globs: set[int] = set()
    wild = False
    argv: list[str] | None = []
    assignments: list[str] = []
    own: list[Redirect] = []
    if node.type == "variable_assignment":
        _words(walk, node, in_argv=False)
        walk.commands[slot] = SimpleCommand(walk.text(outer), (), (walk.text(node),), inherited)
        return
    for child in node.children:
        kind = child.type
        if kind == "variable_assignment":
            assignments.append(walk.text(child))
            _words(walk, child, in_argv=False)
        elif kind == "variable_assignments":
            for part in child.children:
                if part.type == "variable_assignment":
                    assignments.append(walk.text(part))
                    _words(walk, part, in_argv=False)
        elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            own.append(_redirect(walk, child))
        elif not child.is_named:
            # `export`, `unset`, `declare`... are anonymous keyword tokens.
            if argv is not None and kind not in ("$",):
                argv.append(walk.text(child))
            elif kind == "$":
                argv = None
        elif kind == "comment":
            continue
        else:
            target = child.children[0] if kind == "command_name" and child.children else child
            first = target.children[0] if target.type == "concatenation" else target
            wild = wild or _has_unquoted_glob(walk, target)
            if first.type == "word" and walk.source[first.start_byte : first.start_byte + 1] in (
                b"*",
                b"?",
                b"[",
            ):
                globs.add(len(argv) if argv is not None else 0)
            if argv is not None and _prints_only(argv) and _plain_variables(target):
                # `echo $HOME "$?"`: whatever the values, echo only prints them.
                argv.append(walk.text(target))
                continue
            value = _word(walk, target)
            if value is None:
                argv = None
            elif argv is not None:
                argv.append(value)
    walk.globs[slot] = frozenset(globs)
    walk.commands[slot] = SimpleCommand(
        walk.text(outer),
        None if argv is None else tuple(argv),
        tuple(assignments),
        tuple(own) + inherited,
        wild,
    )


# Commands that only print their words, whatever they are: plain `$x` in them is harmless.
# (printf is not here: a `-v` from a variable would assign a shell variable.)
_PRINTS_ONLY = frozenset({"echo"})


def _prints_only(argv: list[str]) -> bool:
    return len(argv) >= 1 and argv[0] in _PRINTS_ONLY


def _plain_variables(node: Node) -> bool:
    """A word made of text and plain `$x` only (no `${x:=y}`, no substitution)."""
    if node.type == "simple_expansion":
        return True
    if node.type == "string":
        return _plain_string(node) and any(c.type == "simple_expansion" for c in node.children)
    if node.type == "concatenation":
        # Only words that hold a variable: plain words (braces included) take the usual path.
        return any(_plain_variables(child) for child in node.children) and all(
            (child.type in ("word", "raw_string") and b"{" not in (child.text or b""))
            or _plain_variables(child)
            for child in node.children
        )
    return False


def _has_unquoted_glob(walk: Walk, node: Node) -> bool:
    """A `*`, `?` or `[` outside quotes and not escaped, in a word or its unquoted parts."""
    if node.type == "word":
        escaped = False
        for char in walk.text(node):
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char in "*?[":
                return True
        return False
    if node.type == "concatenation":
        return any(_has_unquoted_glob(walk, child) for child in node.children)
    return node.type == "extglob_pattern"


_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_INTEGER = re.compile(r"[+-]?[0-9]+")


def _test_command(walk: Walk, node: Node, inherited: tuple[Redirect, ...]) -> None:
    """`[ ... ]` and `[[ ... ]]` as a command whose words are the test's own.

    A test has no effect but its answer, so plain `$x` words are harmless in it and kept as
    written. Two things are not: `[[`'s arithmetic operators evaluate their operands (an
    array subscript there runs command substitutions, and a variable's value is evaluated
    again), so only integer literals pass; and everything the usual walk refuses (command
    substitutions, `${x:=y}`) is refused here too."""
    slot = len(walk.commands)
    walk.commands.append(_PLACEHOLDER)
    walk.starts.append(node.start_byte)
    walk.globs.append(frozenset())
    words: list[str] = []
    double = bool(node.children) and node.children[0].type == "[["
    if not double and _has_bare_angle(node):
        # In `[ x > f ]` bash reads `>` as a redirection that creates or empties f (and `<`
        # as one that opens a file); tree-sitter reads a comparison.
        walk.unknown = walk.unknown or "`>` or `<` inside `[ ]`, which bash reads as a redirection"
    _test_words(walk, node, words, double)
    walk.commands[slot] = SimpleCommand(walk.text(node), tuple(words), (), inherited)


def _has_bare_angle(node: Node) -> bool:
    stack = list(node.children)
    while stack:
        child = stack.pop()
        if child.type in (">", "<", ">>", "<<", ">&", "<&", "&>", ">|", "<>"):
            return True
        if child.type not in ("string", "raw_string"):
            stack.extend(child.children)
    return False


def _test_words(walk: Walk, node: Node, out: list[str], double: bool) -> None:
    if double and node.type == "binary_expression":
        operator = next((c for c in node.children if c.type == "test_operator"), None)
        if operator is not None and walk.text(operator) in _ARITHMETIC_TESTS:
            for side in node.children:
                if side is operator or not side.is_named:
                    continue
                if side.type not in ("number", "word") or not _INTEGER.fullmatch(walk.text(side)):
                    walk.problems.append(
                        f"`{_short(walk, node)}` evaluates `{walk.text(side)}` as arithmetic, "
                        "which can run commands"
                    )
    for child in node.children:
        kind = child.type
        if kind in ("binary_expression", "unary_expression", "parenthesized_expression"):
            _test_words(walk, child, out, double)
        elif (
            not child.is_named
            or kind == "test_operator"
            or kind == "simple_expansion"
            or (kind == "string" and _plain_string(child))
        ):
            out.append(walk.text(child))
        elif kind in ("extglob_pattern", "regex"):
            _words(walk, child, in_argv=False)
            out.append(walk.text(child))
        else:
            value = _word(walk, child)
            out.append(value if value is not None else walk.text(child))


def _plain_string(node: Node) -> bool:
    """A double-quoted string of text and plain `$x` only."""
    return all(child.type in ('"', "string_content", "simple_expansion") for child in node.children)


def _redirect(walk: Walk, node: Node) -> Redirect:
    kind = node.type
    if kind == "heredoc_redirect":
        operator = "<<"
        delimiter: str | None = None
        for child in node.children:
            if not child.is_named and child.type.startswith("<<"):
                operator = child.type
            elif child.type == "heredoc_start":
                delimiter = _heredoc_delimiter(walk, child)
            elif child.type == "heredoc_body":
                _heredoc(walk, child)
                _heredoc_ends_early(walk, child, delimiter, strip_tabs=operator == "<<-")
            elif child.type == "heredoc_end":
                _heredoc_end(walk, child, delimiter, strip_tabs=operator == "<<-")
            elif child.is_named and child.type not in ("heredoc_start", "heredoc_end"):
                # A pipeline or list after the here-doc marker: `cat <<EOF | rm x`.
                _statement(walk, child, ())
        return Redirect(operator, None, False)
    if kind == "herestring_redirect":
        content = None
        for child in node.children:
            if child.is_named:
                content = _word(walk, child, quoted_ok=True)
        return Redirect("<<<", content, False)
    if kind != "file_redirect":
        walk.unknown = walk.unknown or kind
        return Redirect(walk.text(node), None, True)
    fd = ""
    operator = ""
    target: str | None = None
    destinations = 0
    for child in node.children:
        if child.type == "file_descriptor":
            fd = walk.text(child)
        elif not child.is_named:
            operator = child.type
        else:
            destinations += 1
            target = _word(walk, child)
            if _has_unquoted_glob(walk, child):
                # Bash expands a pattern here when it matches one file: the file is not the
                # text (`> .gi?/config`).
                walk.problems.append(
                    f"the redirection `{walk.text(node)}` names a file by a pattern"
                )
                target = None
                destinations += 1
    if destinations != 1:
        target = None
    written = fd + operator
    if operator in ("<", "<&", "<&-", ">&-"):
        return Redirect(written, target, False)
    if operator in (">&", "<&") and target is not None and (target.isdigit() or target == "-"):
        return Redirect(written, target, False)
    if target in HARMLESS_TARGETS:
        return Redirect(written, target, False)
    if target is None or not target:
        walk.problems.append(f"the output redirection `{walk.text(node)}` is not a static file")
    return Redirect(written, target or None, True)


_PLAIN_DELIMITER = re.compile(r"[A-Za-z0-9_.,:+@%/-]+")


def _heredoc_delimiter(walk: Walk, node: Node) -> str | None:
    """The line that ends the document as bash sees it: the delimiter with its quotes
    removed. tree-sitter ends the document at the delimiter as written, so any quoting
    but a whole-word `'EOF'`, `"EOF"` or `\\EOF` (and any `$`) could make the two end it
    at different lines: those are refused."""
    written = walk.text(node)
    for opening, closing in (("'", "'"), ('"', '"'), ("\\", "")):
        if written.startswith(opening) and written.endswith(closing) and len(written) > 1:
            inner = written[len(opening) : len(written) - len(closing)]
            if _PLAIN_DELIMITER.fullmatch(inner):
                return inner
    if _PLAIN_DELIMITER.fullmatch(written):
        return written
    walk.unknown = walk.unknown or f"here-document delimiter {written}"
    return None


def _heredoc_end(walk: Walk, node: Node, delimiter: str | None, *, strip_tabs: bool) -> None:
    """bash ends a document only at a line that is exactly its delimiter (after leading
    tabs, for `<<-`); tree-sitter also accepts surrounding blanks. Where they could
    disagree, the command is refused."""
    if delimiter is None:
        return
    source = walk.source
    start = source.rfind(b"\n", 0, node.start_byte) + 1
    end = source.find(b"\n", node.end_byte)
    line = source[start : end if end >= 0 else len(source)].decode("utf-8", "replace")
    if strip_tabs:
        line = line.lstrip("\t")
    if line != delimiter:
        walk.unknown = walk.unknown or f"here-document end `{line.strip()}`"


def _heredoc_ends_early(walk: Walk, node: Node, delimiter: str | None, *, strip_tabs: bool) -> None:
    """A body line bash would take for the end: the rest is commands to bash."""
    for line in walk.text(node).split("\n"):
        if delimiter is not None and (line.lstrip("\t") if strip_tabs else line) == delimiter:
            walk.unknown = walk.unknown or f"here-document line `{line.strip()}`"


def _heredoc(walk: Walk, node: Node) -> None:
    for child in node.children:
        if child.type in SUBSTITUTIONS:
            _words(walk, child, in_argv=False)
        elif child.type == "expansion":
            walk.problems.append(f"the expansion `{walk.text(child)}` in a here-document")


def _words(walk: Walk, node: Node, *, in_argv: bool) -> None:
    """Walk a word-like subtree for substitutions (their commands count) and expansions."""
    kind = node.type
    if kind in SUBSTITUTIONS:
        walk.has_substitution = True
        walk.problems.append(f"the {kind.replace('_', ' ')} `{_short(walk, node)}` runs a command")
        for child in node.children:
            if child.is_named:
                _statement(walk, child, ())
        return
    if kind in EXPANSIONS and in_argv:
        walk.problems.append(f"the expansion `{walk.text(node)}` is not static")
    if kind == "heredoc_body":
        _heredoc(walk, node)
        return
    if kind not in EXPRESSION and node.is_named:
        walk.unknown = walk.unknown or kind
    for child in node.children:
        if child.is_named:
            _words(walk, child, in_argv=in_argv)


def _word(walk: Walk, node: Node, *, quoted_ok: bool = False) -> str | None:
    """The word after quote removal, or None when Bash would still expand it."""
    kind = node.type
    if kind in SUBSTITUTIONS or kind in EXPANSIONS:
        _words(walk, node, in_argv=not quoted_ok)
        return None
    if kind == "word" or kind == "number":
        raw = walk.text(node)
        if BRACE.search(raw):
            walk.problems.append(f"the word `{raw}` is expanded by Bash")
            return None
        if raw.startswith("~"):
            # Kept as written so deny rules and critical-path checks see `rm -rf ~`, and
            # callers expand it as a home directory; never read-only, so no path check
            # has to get `~` right for an automatic allow.
            walk.problems.append(f"the word `{raw}` is expanded by Bash (tilde expansion)")
        if "\\" not in raw:
            return raw
        return re.sub(r"\\(\n|.)", lambda m: "" if m.group(1) == "\n" else m.group(1), raw)
    if kind == "raw_string":
        return walk.text(node)[1:-1]
    if kind == "string":
        value = []
        for child in node.children:
            if child.type == "string_content":
                value.append(unquote_double(walk.text(child)))
            elif child.is_named:
                _word(walk, child, quoted_ok=quoted_ok)
                return None
        return "".join(value)
    if kind == "ansi_c_string":
        return ansi_c(walk.text(node)[2:-1])
    if kind == "concatenation":
        parts = []
        static = True
        for child in node.children:
            part = _word(walk, child, quoted_ok=quoted_ok)
            if part is None:
                static = False
            else:
                parts.append(part)
        if not static:
            return None
        joined_raw = "".join(walk.text(child) for child in node.children if child.type == "word")
        if BRACE.search(joined_raw):
            walk.problems.append(f"the word `{walk.text(node)}` is expanded by Bash")
            return None
        return "".join(parts)
    if kind == "brace_expression":
        walk.problems.append(f"the brace expansion `{walk.text(node)}` is expanded by Bash")
        return None
    # translated_string, arrays and the rest are not static words.
    _words(walk, node, in_argv=True)
    if kind != "translated_string":
        walk.unknown = walk.unknown or (kind if kind not in EXPRESSION else "")
    walk.problems.append(f"the word `{walk.text(node)}` is not static")
    return None
