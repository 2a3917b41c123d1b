"""SKILL.md files: their front matter read, their problems placed by file and line.

A skill is a directory holding `SKILL.md`: YAML front matter between `---` lines, then the
instructions. People write these files for the seeds' system, so the keys are its keys
(`name`, `description`, `allowed-tools`, `disable-model-invocation`, ...). proctor reads the
small part of YAML these files use (`key: value`, quoted strings, booleans, `[a, b]` and
`- item` lists, `>` and `|` blocks) rather than depending on a YAML library for it, and says
exactly where a file goes wrong instead of dropping it silently.

Discovery reads only the front matter's small part that announces a skill; the body is read
again, whole, when the model calls the Skill tool (`load_skill`), so a long skill costs
nothing until it is used and the model always gets the file as it is now.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..access.context import PermissionRule
from ..access.rules import RuleSyntaxError, parse_rule

SKILL_FILE = "SKILL.md"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_SKILL_BYTES = 256 * 1024
"""Larger files are not instructions anyone wrote by hand: reported, not read."""
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]*(?::[a-z0-9][a-z0-9_-]*)*")

SkillSource = Literal["user", "claude-user", "project"]
"""Where a skill was found: proctor's config directory, the user's `~/.claude/skills`, or the
project's `.claude/skills` (a cloned repository's text: see core/tools/skill.py on trust)."""

USED_KEYS = frozenset(
    {
        "name",
        "description",
        "allowed-tools",
        "disable-model-invocation",
        "user-invocable",
        "argument-hint",
        "model",
    }
)
IGNORED_KEYS = frozenset({"version", "license", "metadata", "when_to_use", "compatibility"})
"""Keys the seeds' system reads that change nothing about how a skill runs here."""
UNSUPPORTED_KEYS = frozenset({"effort", "context", "agent", "hooks"})
"""Keys that would change how the skill runs, which proctor does not do yet: said, not hidden."""

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class SkillProblem:
    path: Path
    line: int
    message: str
    severity: Severity = "error"
    """"error": the skill is not offered; "warning": it is, without what is wrong."""

    def __str__(self) -> str:
        kind = "skill not loaded" if self.severity == "error" else "skill"
        return f"{self.path}:{self.line}: {kind}: {self.message}"


@dataclass(frozen=True, slots=True)
class SkillInfo:
    """A skill as the model is told of it and as a call loads it."""

    name: str
    description: str
    path: Path
    """Its SKILL.md."""
    source: SkillSource
    allowed_tools: tuple[PermissionRule, ...] | None = None
    """None: the skill does not narrow anything; () narrows to loading skills only."""
    model_invocable: bool = True
    """False (`disable-model-invocation: true`): not announced to the model, which cannot load
    it; only a person's `/name` runs it."""
    user_invocable: bool = True
    """False (`user-invocable: false`): not a `/name` command; the model may still load it."""
    argument_hint: str = ""
    """What `/name` takes, shown beside it in the prompt's completion."""
    model: str | None = None
    """The model for a turn the person starts with `/name` (as a command's `model`); a skill
    the model loads mid-turn leaves the turn's model as it is."""
    body: str = ""
    """The instructions after the front matter (filled by `load_skill`, not by discovery's
    catalog, which keeps only what announces the skill)."""

    @property
    def base_dir(self) -> Path:
        return self.path.parent


@dataclass(frozen=True, slots=True)
class SkillCatalog:
    """The session's skills by name, and what was wrong with the files that were not."""

    skills: tuple[SkillInfo, ...] = ()
    problems: tuple[SkillProblem, ...] = ()
    sources: tuple[tuple[Path, SkillSource], ...] = ()
    """The directories it was found in (only those the session may use: a project's only when
    trusted), so a skill added mid-session can be looked for where this one looked."""
    _by_name: dict[str, SkillInfo] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for skill in self.skills:
            self._by_name.setdefault(skill.name, skill)

    def find(self, name: str) -> SkillInfo | None:
        return self._by_name.get(name.strip().removeprefix("/"))  # `/x`: as a slash command

    def announced(self) -> tuple[SkillInfo, ...]:
        """The skills the model is told of, by name (a stable order: the prompt is cached)."""
        return tuple(sorted((s for s in self.skills if s.model_invocable), key=lambda s: s.name))

    def rescanned(self) -> SkillCatalog:
        """The skills in the same directories as they are on disk now."""
        return discover(self.sources)


class SkillFileError(ValueError):
    def __init__(self, problem: SkillProblem) -> None:
        super().__init__(str(problem))
        self.problem = problem


def discover(directories: Iterable[tuple[Path, SkillSource]]) -> SkillCatalog:
    """Every `<dir>/*/SKILL.md` of the directories, first directory first: a name found
    earlier wins, and the later file is reported (a project cannot shadow the user's skill)."""
    skills: list[SkillInfo] = []
    problems: list[SkillProblem] = []
    seen: dict[str, Path] = {}
    sources = tuple(directories)
    for directory, source in sources:
        try:
            entries = sorted(p for p in directory.iterdir() if p.is_dir())
        except OSError:
            continue  # no such directory: nothing to offer
        for entry in entries:
            path = entry / SKILL_FILE
            if not path.is_file():
                continue
            try:
                skill, warnings = read_skill(path, source)
            except SkillFileError as error:
                problems.append(error.problem)
                continue
            problems += warnings
            if skill.name in seen:
                problems.append(
                    SkillProblem(
                        path, 1, f"{skill.name!r} is already the skill in {seen[skill.name]}"
                    )
                )
                continue
            seen[skill.name] = path
            skills.append(skill)
    return SkillCatalog(tuple(skills), tuple(problems), sources)


def read_skill(path: Path, source: SkillSource) -> tuple[SkillInfo, list[SkillProblem]]:
    """The skill in `path`, body included, and its warnings; raises SkillFileError."""
    try:
        if why := _not_readable(path, source):
            raise SkillFileError(SkillProblem(path, 1, why))
        text = path.read_text(encoding="utf-8-sig")  # an editor's byte-order mark is no key
    except (OSError, UnicodeDecodeError) as error:
        raise SkillFileError(SkillProblem(path, 1, f"cannot be read ({error})")) from error
    values, lines, body = split_front_matter(text, path)
    warnings: list[SkillProblem] = []
    for key, line in lines.items():
        if key in UNSUPPORTED_KEYS:
            warnings.append(
                SkillProblem(path, line, f"`{key}` is not supported by proctor yet", "warning")
            )
        elif key not in USED_KEYS and key not in IGNORED_KEYS:
            warnings.append(SkillProblem(path, line, f"unknown key `{key}`", "warning"))

    def fail(key: str, message: str) -> SkillFileError:
        return SkillFileError(SkillProblem(path, lines.get(key, 1), message))

    name = values.get("name", path.parent.name)
    if not isinstance(name, str) or not name.strip():
        raise fail("name", "`name` must be a non-empty text")
    name = name.strip()
    if len(name) > MAX_NAME or not NAME_PATTERN.fullmatch(name):
        raise fail(
            "name",
            f"`name` {name!r} must be lowercase letters, digits and hyphens, at most "
            f"{MAX_NAME} characters",
        )
    description = values.get("description", _first_paragraph(body))
    if not isinstance(description, str) or not description.strip():
        raise fail("description", "no `description`: the model is told of a skill by it")
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION:
        raise fail("description", f"`description` is longer than {MAX_DESCRIPTION} characters")
    hidden_from_model = _flag(values, lines, path, "disable-model-invocation", False)
    user_invocable = _flag(values, lines, path, "user-invocable", True)
    hint = _text(values, lines, path, "argument-hint")
    model = _text(values, lines, path, "model") or None
    if hidden_from_model and not user_invocable:
        warnings.append(
            SkillProblem(
                path,
                lines["user-invocable"],
                "`disable-model-invocation: true` and `user-invocable: false` leave no one "
                "to run it",
                "warning",
            )
        )
    if model and not (hidden_from_model and user_invocable):
        said = (
            f"`model: {model}` is never used: the skill is not a /{name} command, and a "
            "skill the model loads keeps the turn's model"
            if not user_invocable
            else f"`model: {model}` is used when you run /{name}; when the model loads the "
            "skill, the turn keeps its model"
        )
        warnings.append(SkillProblem(path, lines["model"], said, "warning"))
    allowed = None
    if "allowed-tools" in values:
        allowed = _allowed_tools(values["allowed-tools"], path, lines["allowed-tools"], name)
    info = SkillInfo(
        name,
        description,
        path,
        source,
        allowed,
        model_invocable=not hidden_from_model,
        user_invocable=user_invocable,
        argument_hint=hint,
        model=model,
        body=body.strip(),
    )
    return info, warnings


def _not_readable(path: Path, source: SkillSource) -> str | None:
    """Why `path` is not read as a skill, or None. A project's skill is a cloned repository's
    text: a SKILL.md (or its folder) linked out of the project would send another file on
    this machine to the model (its first paragraph as the description, in every request)
    with nobody asked, so it must lie inside the project once links are followed. Checked
    on every read, since the model's load reads the file again. Anyone's file must be a
    regular file of a sane size: a FIFO would block, a huge file fill memory."""
    if not path.is_file():
        return "is not a regular file"
    if source == "project":
        project = path.parents[3]  # <project>/.claude/skills/<name>/SKILL.md
        resolved = path.resolve()
        if not resolved.is_relative_to(project.resolve()):
            return (
                f"is a link to {resolved}, outside the project; a project's skill cannot "
                "bring in other files on this machine"
            )
    if path.stat().st_size > MAX_SKILL_BYTES:
        return f"is larger than {MAX_SKILL_BYTES // 1024} KB"
    return None


def _flag(
    values: dict[str, FrontValue], lines: dict[str, int], path: Path, key: str, default: bool
) -> bool:
    value = values.get(key, default)
    if not isinstance(value, bool):
        raise SkillFileError(
            SkillProblem(path, lines.get(key, 1), f"`{key}` must be true or false")
        )
    return value


def _text(values: dict[str, FrontValue], lines: dict[str, int], path: Path, key: str) -> str:
    value = values.get(key, "")
    if isinstance(value, list) and key == "argument-hint":
        # `argument-hint: [message]` is text to people, though YAML reads it as a list.
        value = f"[{', '.join(value)}]"
    if not isinstance(value, str):
        raise SkillFileError(SkillProblem(path, lines.get(key, 1), f"`{key}` must be a text"))
    return value.strip()


def _allowed_tools(
    value: str | bool | list[str], path: Path, line: int, name: str
) -> tuple[PermissionRule, ...]:
    if isinstance(value, bool):
        raise SkillFileError(SkillProblem(path, line, "`allowed-tools` must list tool names"))
    entries = value if isinstance(value, list) else split_tool_list(value)
    rules = []
    for entry in entries:
        try:
            rules.append(parse_rule(entry, "allow", source=f"skill {name}", path=path))
        except RuleSyntaxError as error:
            raise SkillFileError(SkillProblem(path, line, f"`allowed-tools`: {error}")) from error
    return tuple(rules)


def split_tool_list(text: str) -> list[str]:
    """`Read, Grep Bash(git diff *)` → the three entries: commas and spaces separate entries,
    except inside a specifier's parentheses."""
    entries, current, depth = [], "", 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        if depth == 0 and (char == "," or char.isspace()):
            if current.strip():
                entries.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        entries.append(current.strip())
    return entries


FrontValue = str | bool | list[str]


def split_front_matter(text: str, path: Path) -> tuple[dict[str, FrontValue], dict[str, int], str]:
    """The front matter's values, the line each key is on, and the body after it."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, {}, text  # no front matter: the name is the directory's
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise SkillFileError(
            SkillProblem(path, 1, "the front matter opened here is never closed by a `---` line")
        )
    values: dict[str, FrontValue] = {}
    where: dict[str, int] = {}
    index = 1
    while index < end:
        raw = lines[index]
        number = index + 1
        index += 1
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if raw[0].isspace():
            raise SkillFileError(
                SkillProblem(path, number, "an indented line that belongs to no key")
            )
        key, colon, rest = raw.partition(":")
        key = key.strip()
        if not colon or not key:
            raise SkillFileError(
                SkillProblem(path, number, f"expected `key: value`, found {raw.strip()!r}")
            )
        if key in where:
            raise SkillFileError(
                SkillProblem(path, number, f"`{key}` is given twice (also on line {where[key]})")
            )
        where[key] = number
        rest = rest.strip()
        block: list[str] = []
        while index < end and (not lines[index].strip() or lines[index][0].isspace()):
            block.append(lines[index])
            index += 1
        values[key] = _value(rest, block, path, number)
    return values, where, "\n".join(lines[end + 1 :])


def _value(rest: str, block: list[str], path: Path, line: int) -> FrontValue:
    items = [b.strip() for b in block if b.strip()]
    if rest in (">", "|", ">-", "|-", ">+", "|+"):
        joiner = " " if rest.startswith(">") else "\n"
        return joiner.join(items)
    if not rest:
        if items and all(item.startswith("- ") or item == "-" for item in items):
            return [_scalar(item[1:].strip()) for item in items if item[1:].strip()]
        if items:
            raise SkillFileError(SkillProblem(path, line, "expected a `- item` list"))
        return ""
    if items:
        # A plain value carried on over indented lines, as YAML folds it.
        rest = " ".join([rest, *items])
    if rest.startswith("[") and rest.endswith("]"):
        return [_scalar(part.strip()) for part in rest[1:-1].split(",") if part.strip()]
    if rest in ("true", "True", "false", "False"):
        return rest.lower() == "true"
    if rest[0] in "'\"" and (len(rest) < 2 or rest[-1] != rest[0]):
        raise SkillFileError(
            SkillProblem(path, line, f"the quote opened in {rest!r} is not closed")
        )
    return _scalar(rest)


def _scalar(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        inner = text[1:-1]
        return inner.replace("''", "'") if text[0] == "'" else inner.replace('\\"', '"')
    return text.split(" #", 1)[0].rstrip()


def _first_paragraph(body: str) -> str:
    for line in body.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped
    return ""
