"""sed and awk programs: read-only only when every command in them only prints.

Both languages can write files and run programs from inside the script (sed's `w`, `W`,
`e`, `s///w`, `s///e`, `r`; awk's `system()`, `getline`, `print > file`, `print | cmd`),
so the script itself has to be read. The readers below accept a conservative subset of
each language and report the first thing outside it; they never need to understand a
whole program to refuse one.
"""

from __future__ import annotations

import re

# sed commands that take no argument and only print, move or edit the pattern space.
_SED_SIMPLE = frozenset("pPdDnNgGhHxz=lFqQ{}")
# sed commands followed by a label or text to the end of the line: harmless.
_SED_TEXT = frozenset("btT:aic")
_SED_UNSAFE = {
    "w": "writes the pattern space to a file",
    "W": "writes the first line of the pattern space to a file",
    "e": "runs a command",
    "r": "reads a file the path checks cannot see",
    "R": "reads a file the path checks cannot see",
    "v": "is a GNU extension this check does not read",
    "L": "is a GNU extension this check does not read",
}
_SED_LABEL = re.compile(r"[ \t]*[\w.-]*[ \t]*(?=[;\n}]|$)")
_SED_ADDRESS = re.compile(r"\s*(\d+(~\d+)?|\$|/(\\.|[^/\\])*/[IM]*|\\(.)(\\.|(?!\4).)*\4[IM]*)")


def sed_problem(script: str) -> str:
    """ "" when every command of the script is harmless, else why it is not."""
    i, n = 0, len(script)
    while i < n:
        char = script[i]
        if char in " \t\n;":
            i += 1
            continue
        if char == "#":
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        i = _sed_address(script, i)
        if i < n and script[i] == ",":
            i += 1
            if i < n and script[i] in "+~":
                i += 1
                while i < n and script[i].isdigit():
                    i += 1
            else:
                i = _sed_address(script, i)
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            return "ends in an address without a command"
        command = script[i]
        i += 1
        if command in _SED_UNSAFE:
            return f"uses the `{command}` command, which {_SED_UNSAFE[command]}"
        if command in _SED_SIMPLE:
            if command in "qQlL":
                while i < n and (script[i].isdigit() or script[i] in " \t"):
                    i += 1
            continue
        if command in "btT:":
            # A label is one word: GNU sed ends it at a blank and reads what follows as the
            # next command (`:x w out` writes), so anything after it but an end refuses.
            match = _SED_LABEL.match(script, i)
            if match is None:
                return f"has a `{command}` label followed by more, which sed may run"
            i = match.end()
            continue
        if command in _SED_TEXT:
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        if command in "sy":
            i, problem = _sed_substitute(script, i, command)
            if problem:
                return problem
            continue
        return f"uses `{command}`, which this check does not know"
    return ""


def _sed_address(script: str, i: int) -> int:
    match = _SED_ADDRESS.match(script, i)
    return i if match is None else match.end()


def _sed_substitute(script: str, i: int, command: str) -> tuple[int, str]:
    if i >= len(script) or script[i] in "\\\n":
        return i, f"has an `{command}` command this check cannot read"
    delimiter = script[i]
    i += 1
    for _ in range(2):
        while i < len(script) and script[i] != delimiter:
            i += 2 if script[i] == "\\" else 1
        if i >= len(script):
            return i, f"has an unterminated `{command}` command"
        i += 1
    if command == "y":
        return i, ""
    while i < len(script) and script[i] not in ";\n}":
        flag = script[i]
        if flag == "w":
            return i, "uses the `w` flag of `s`, which writes to a file"
        if flag == "e":
            return i, "uses the `e` flag of `s`, which runs the result as a command"
        if not (flag.isdigit() or flag in "gpiImM \t"):
            return i, f"uses the unknown `s` flag `{flag}`"
        i += 1
    return i, ""


# awk: a real tokenizer (strings, regexes, division, comments, continuations), then checks
# on the tokens. What can run a program, write a file, or read one the path checks cannot
# see is refused: system(), getline, `print > file`, `print | cmd`, `@` (gawk's indirect
# calls and @include/@load), and assigning to ARGV, ARGC or ENVIRON (which changes what
# files awk reads or what its children see). Anything the tokenizer does not know is
# refused too.

_AWK_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_AWK_NUMBER = re.compile(r"(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
_AWK_OPERATORS = (
    "**=", "^=", "+=", "-=", "*=", "/=", "%=", "==", "<=", ">=", "!=", "!~", "&&", "||",
    "++", "--", ">>", "|&", "**", "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*",
    "%", "^", "!", ">", "<", "|", "?", ":", "~", "$", "=", "/",
)  # fmt: skip
# After these a `/` divides; anywhere else it starts a regular expression.
_AWK_OPERAND_ENDS = frozenset({"name", "number", "string", ")", "]", "$", "++", "--"})
_AWK_KEYWORDS = frozenset(
    {"BEGIN", "END", "BEGINFILE", "ENDFILE", "function", "func", "if", "else", "while",
     "for", "do", "break", "continue", "next", "nextfile", "exit", "return", "delete", "in",
     "print", "printf", "getline"}
)  # fmt: skip
_AWK_ASSIGNING = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "^=", "**=", "++", "--"})
_AWK_GUARDED = frozenset({"ARGV", "ARGC", "ENVIRON"})


def awk_tokens(program: str) -> list[tuple[str, str]] | str:
    """(kind, text) tokens of an awk program, or why it cannot be read."""
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(program)
    while i < n:
        char = program[i]
        if char == "\\" and program.startswith("\\\n", i):
            i += 2  # a line continuation
            continue
        if char in " \t\r":
            i += 1
            continue
        if char == "\n":
            tokens.append(("newline", "\n"))
            i += 1
            continue
        if char == "#":
            end = program.find("\n", i)
            i = n if end < 0 else end
            continue
        if char == '"':
            j = i + 1
            while j < n and program[j] != '"':
                if program[j] == "\n":
                    return "has a string that runs past the end of its line"
                j += 2 if program[j] == "\\" else 1
            if j >= n:
                return "has a string with no closing quote"
            tokens.append(("string", program[i : j + 1]))
            i = j + 1
            continue
        previous = tokens[-1][0] if tokens else ""
        if char == "/" and previous not in _AWK_OPERAND_ENDS:
            j = i + 1
            in_class = False
            while j < n and (program[j] != "/" or in_class):
                if program[j] == "\n":
                    return "has a regular expression that runs past the end of its line"
                if program[j] == "\\":
                    j += 1
                elif program[j] == "[":
                    in_class = True
                elif program[j] == "]":
                    in_class = False
                j += 1
            if j >= n:
                return "has a regular expression with no closing /"
            tokens.append(("regex", program[i : j + 1]))
            i = j + 1
            continue
        if (match := _AWK_NUMBER.match(program, i)) and match.group():
            tokens.append(("number", match.group()))
            i = match.end()
            continue
        if match := _AWK_NAME.match(program, i):
            word = match.group()
            tokens.append(("keyword" if word in _AWK_KEYWORDS else "name", word))
            i = match.end()
            continue
        operator = next((op for op in _AWK_OPERATORS if program.startswith(op, i)), None)
        if operator is None:
            return f"has `{char}`, which this check does not read as awk"
        tokens.append((operator, operator))
        i += len(operator)
    return tokens


def awk_problem(program: str) -> str:
    tokens = awk_tokens(program)
    if isinstance(tokens, str):
        return tokens
    printing = ""
    depth = 0
    for index, (kind, text) in enumerate(tokens):
        if kind in ("|", "|&"):
            return "pipes to or from a command"
        if text == "system":
            return "uses system, which runs commands"
        if text == "getline":
            return "uses getline, which can run commands or read files"
        if kind == "name" and text in _AWK_GUARDED and _assigned(tokens, index):
            return f"assigns to {text}, which changes what awk reads or runs"
        if kind == "keyword" and text in ("print", "printf"):
            printing, depth = text, 0
        elif kind in ("newline", ";", "{", "}"):
            printing = ""
        elif kind == "(":
            depth += 1
        elif kind == ")":
            depth -= 1
        elif kind in (">", ">>") and printing and depth <= 0:
            return f"redirects `{printing}` output to a file"
    # `@` (gawk's indirect calls, @include, @load) is not a token: the tokenizer refused it.
    return ""


def _assigned(tokens: list[tuple[str, str]], index: int) -> bool:
    """Whether the name at `index` (with any subscript) is assigned to or deleted."""
    if index > 0 and tokens[index - 1][1] in ("delete", "++", "--"):
        return True
    j = index + 1
    if j < len(tokens) and tokens[j][0] == "[":
        depth = 0
        while j < len(tokens):
            depth += tokens[j][0] == "["
            depth -= tokens[j][0] == "]"
            j += 1
            if depth == 0:
                break
    return j < len(tokens) and tokens[j][0] in _AWK_ASSIGNING
