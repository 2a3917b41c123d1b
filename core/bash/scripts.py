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
        if command in _SED_TEXT:
            end = script.find("\n", i)
            if command in "btT:":
                semi = script.find(";", i)
                end = semi if semi >= 0 and (end < 0 or semi < end) else end
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


# awk: what can run a program, write a file or read one the path checks cannot see.
_AWK_STRINGS = re.compile(r'"(\\.|[^"\\])*"')
_AWK_WORDS = re.compile(r"\b(system|getline|close|fflush)\b|@|\|")
_AWK_STATEMENT = re.compile(r"\b(print|printf)\b([^;\n{}]*)")
_AWK_OPERAND_END = re.compile(r"[\w)\]$.]\s*$")


def awk_problem(program: str) -> str:
    text = _AWK_STRINGS.sub('""', program)
    text = _strip_regexes(text)
    for match in _AWK_WORDS.finditer(text):
        word = match.group()
        if word == "|":
            if (
                text[match.start() - 1 : match.start()] == "|"
                or text[match.end() : match.end() + 1] == "|"
            ):
                continue
            return "pipes to or from a command"
        if word in ("close", "fflush"):
            continue
        if word == "@":
            return "uses `@`, which can call functions such as system() indirectly"
        return f"uses {word}, which can run commands or read files"
    for match in _AWK_STATEMENT.finditer(text):
        depth = 0
        for char in match.group(2):
            depth += char == "("
            depth -= char == ")"
            if char == ">" and depth <= 0:
                return f"redirects `{match.group(1)}` output to a file"
    return ""


def _strip_regexes(text: str) -> str:
    """Blank out /regex/ literals so their contents are not read as operators."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "/" and not _AWK_OPERAND_END.search("".join(out[-20:])):
            j = i + 1
            while j < len(text) and text[j] not in "/\n":
                j += 2 if text[j] == "\\" else 1
            out.append("//")
            i = j + 1
            continue
        out.append(char)
        i += 1
    return "".join(out)
