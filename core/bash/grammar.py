"""The Bash grammar facts the parser relies on: node types, characters, quoting rules.

Kept apart from the walk in parse.py so the lists a reviewer must audit (which node types
are understood, which may appear in a read-only command, which characters are refused)
sit together, away from the traversal mechanics.
"""

from __future__ import annotations

import re

# Tab and newline are ordinary shell whitespace. Every other control character, and every
# Unicode space, separator, format or bidi character, can make the text a person approves
# differ from what Bash executes (CR hides what precedes it, NUL truncates, U+00A0 looks
# like a space but is part of a word, U+2028 looks like a line break but is not).
FORBIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00a0\u1680\u180e\u2000-\u200f\u2028-\u202f"
    "\u205f-\u206f\u3000\ufeff\ufff9-\ufffb]"
)

# Brace expansion needs an unquoted `{` with a comma or a `..` sequence before its `}`.
BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")

# Containers whose children are statements or the punctuation between them.
STATEMENTS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "compound_statement",
        "negated_command",
        "if_statement",
        "elif_clause",
        "else_clause",
        "for_statement",
        "c_style_for_statement",
        "while_statement",
        "do_group",
        "case_statement",
        "case_item",
        "function_definition",
        "redirected_statement",
    }
)
# Statement containers a read-only command may use: the rest bind variables or loop.
READ_ONLY_CONTAINERS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "compound_statement",
        "negated_command",
        "if_statement",
        "elif_clause",
        "else_clause",
        "redirected_statement",
        "test_command",
    }
)
# Node types that may appear inside words, tests and arithmetic; understood, walked for
# nested commands, but only the plain ones are static.
EXPRESSION = frozenset(
    {
        "word",
        "string",
        "string_content",
        "raw_string",
        "ansi_c_string",
        "translated_string",
        "concatenation",
        "number",
        "simple_expansion",
        "expansion",
        "arithmetic_expansion",
        "command_substitution",
        "process_substitution",
        "brace_expression",
        "variable_name",
        "special_variable_name",
        "subscript",
        "array",
        "binary_expression",
        "unary_expression",
        "ternary_expression",
        "postfix_expression",
        "parenthesized_expression",
        "test_operator",
        "regex",
        "extglob_pattern",
        "comment",
        "heredoc_body",
        "heredoc_content",
        "heredoc_start",
        "heredoc_end",
        "file_descriptor",
        "command_name",
        "variable_assignment",
        "variable_assignments",
        "test_command",
        "declaration_command",
        "unset_command",
        "herestring_redirect",
        "heredoc_redirect",
        "file_redirect",
        "case_item",
    }
)
EXPANSIONS = frozenset({"simple_expansion", "expansion", "arithmetic_expansion"})
SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def unquote_double(text: str) -> str:
    if "\\" not in text:
        return text
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
         "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip


_ANSI_NUMERIC = re.compile(r"[0-7]{1,3}|x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}")


def ansi_c(body: str) -> str | None:
    """Decode `$'...'`; None for escapes we do not decode exactly (fail closed).

    Bash makes a numeric escape one byte (octal keeps only the low 8 bits, so `\\777` is
    0xFF), a `\\u` escape depends on the locale, and `\\0` ends the word. Only numeric
    escapes that give plain ASCII (1 to 127) are decoded; the rest are not static."""
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        code = body[i + 1 : i + 2]
        if code in _ANSI:
            out.append(_ANSI[code])
            i += 2
            continue
        match = _ANSI_NUMERIC.match(body, i + 1)
        if match is None:
            return None
        digits = match.group()
        if digits[0] in "uU":
            return None  # the locale decides what bytes these become
        value = int(digits, 8) if digits[0] in "01234567" else int(digits[1:], 16)
        if not 0 < value < 0x80:
            return None
        out.append(chr(value))
        i += 1 + len(digits)
    return "".join(out)
