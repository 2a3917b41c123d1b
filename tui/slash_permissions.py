"""`/permissions allow|ask|deny|remove ...`: a rule changed for the session or in a file.

    /permissions deny Bash(rm:*)                  for this session only
    /permissions allow Bash(npm test:*) --local   .proctor/settings.local.json, and now
    /permissions remove deny Bash(rm:*)           the session's deny rule of that text
    /permissions remove allow Read --project      out of .proctor/settings.json, and now

A destination is one of proctor's own three files, the ones a person owns (`--local`,
where the permission dialog's "don't ask again" already writes; `--project`; `--user`), so
the writer is the dialog's (core/settings/write.py): the file keeps its other content, a
file it cannot read is never overwritten, and the rule changes the running session at once
(tagged with the file, so the listing says where it lives). A rule's kind counts when it is
removed: `remove deny X` never takes out an allow rule of the same text, and a bare
`remove X` that matches two kinds asks which. The flag is a word of its own, first or last,
so `Bash(echo --local)` stays a rule.

The parsing is one closed value (`RuleChange`), so the applying code handles each case once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from core.access.context import PermissionRule, RuleBehavior

if TYPE_CHECKING:
    from .app import ProctorApp
    from .widgets.conversation import NoticeLevel

RuleFile = Literal["local", "project", "user"]
"""The settings sources `/permissions` writes: proctor's own files, never a Claude one."""
FLAGS: dict[str, RuleFile] = {"--local": "local", "--project": "project", "--user": "user"}
KINDS: tuple[RuleBehavior, ...] = get_args(RuleBehavior)

USAGE = (
    "/permissions allow|ask|deny RULE adds a rule for this session; "
    "/permissions remove [allow|ask|deny] RULE takes one out; "
    "add --local, --project or --user to change that settings file too"
)


@dataclass(frozen=True, slots=True)
class RuleChange:
    verb: Literal["add", "remove"]
    kind: RuleBehavior | None
    """None only for `remove RULE`: the rules in force say which kind it is."""
    text: str
    file: RuleFile | None
    """None: the session only."""


def parse_change(arguments: str) -> RuleChange | str:
    """The change `arguments` ask for, or what is wrong with them (said to the person)."""
    verb, _, rest = arguments.strip().partition(" ")
    rest = rest.strip()
    flags: list[str] = []
    if leading := _LEADING.fullmatch(rest):
        flags.append(leading.group(1))
        rest = (leading.group(2) or "").strip()
    while trailing := _TRAILING.fullmatch(rest):  # `--local --user` at the end: both seen
        rest, flag = trailing.group(1).strip(), trailing.group(2)
        flags.append(flag)
    if unknown := [f for f in flags if f not in FLAGS]:
        return f"/permissions: {unknown[0]} is not an option ({', '.join(FLAGS)}); nothing changed."
    if len(flags) > 1:
        return "/permissions takes one of --local, --project or --user; nothing changed."
    kind: str | None = None
    if verb in KINDS:
        kind = verb
    elif verb != "remove":
        return USAGE
    elif (first := rest.split(maxsplit=1)[:1]) and first[0] in KINDS:
        kind, rest = first[0], rest[len(first[0]) :].strip()
    if not rest:
        return USAGE
    change_kind = next((k for k in KINDS if k == kind), None)
    verb_of: Literal["add", "remove"] = "remove" if verb == "remove" else "add"
    return RuleChange(verb_of, change_kind, rest, FLAGS[flags[0]] if flags else None)


_LEADING = re.compile(r"(--[A-Za-z-]+)(?:\s+(.*))?", re.S)
_TRAILING = re.compile(r"(.*?)\s+(--[A-Za-z-]+)", re.S)
"""A flag is a word of its own at either end: `Bash(echo --local)` ends in `)`."""


def change_rule(app: ProctorApp, arguments: str) -> tuple[str, NoticeLevel]:
    """Carry out `/permissions <arguments>`; the notice that says what happened."""
    from core.access.rules import RuleSyntaxError, parse_rule

    change = parse_change(arguments)
    if isinstance(change, str):
        return change, "warning"
    try:
        parse_rule(change.text, change.kind or "allow")
    except RuleSyntaxError as error:
        return f"/permissions: {error}; no rule was changed.", "warning"
    if change.verb == "add":
        return _add(app, change)
    return _remove(app, change)


def _file_path(app: ProctorApp, file: RuleFile) -> Path:
    from core.settings.paths import settings_paths

    assert app.live is not None
    return settings_paths(app.live.cwd)[file]


def _project_of(app: ProctorApp, file: RuleFile) -> Path | None:
    """The project a local or project file must stay in (links followed); the user's own
    file may live where the person keeps it."""
    assert app.live is not None
    return None if file == "user" else app.live.cwd


def _add(app: ProctorApp, change: RuleChange) -> tuple[str, NoticeLevel]:
    from core.access.rules import parse_rule, rule_problem
    from core.settings.write import SettingsWriteError, add_rule

    assert app.live is not None and change.kind is not None
    rule = parse_rule(change.text, change.kind)
    problem = rule_problem(rule, app.live.tool_names)
    if problem:
        return f"/permissions: {problem}; no rule was added.", "warning"
    where = "for this session"
    if change.file is not None:
        path = _file_path(app, change.file)
        try:
            added = add_rule(path, change.kind, change.text, inside=_project_of(app, change.file))
        except SettingsWriteError as error:
            return f"/permissions: {error}; no rule was added.", "error"
        rule = parse_rule(change.text, change.kind, source=change.file, path=path)
        where = f"to {path}" if added else f"({path} had it already)"
    store = app.live.store
    if rule not in store.get().permission_context.rules:
        store.set(lambda s: s.with_permission_context(s.permission_context.with_rules(rule)))
    return f"Added the {change.kind} rule {rule} {where}; it applies now.", "info"


def _remove(app: ProctorApp, change: RuleChange) -> tuple[str, NoticeLevel]:
    assert app.live is not None
    context = app.live.store.get().permission_context
    text = _canonical(change.text)
    same = [r for r in context.rules if str(r) == text]
    kind = change.kind
    if kind is None:
        kinds = sorted({r.behavior for r in same})
        if len(kinds) > 1:
            which = " or ".join(f"/permissions remove {k} {text}" for k in kinds)
            return (
                f"/permissions: {text} is a rule of kinds {', '.join(kinds)}; say which: {which}.",
                "warning",
            )
        if not kinds:
            return f"/permissions: there is no rule {text} in force.", "warning"
        kind = kinds[0]
    same = [r for r in same if r.behavior == kind]
    if change.file is not None:
        return _remove_from_file(app, change.file, kind, text, same)
    session = [r for r in same if r.source == "session"]
    elsewhere = [r for r in same if r.source != "session"]
    if not same:
        return f"/permissions: there is no {kind} rule {text} in force.", "warning"
    if not session:
        return f"/permissions: the {kind} rule {text} {_comes_from(elsewhere[0])}.", "warning"
    _drop(app, session)
    said = f"Removed the {kind} rule {text} for this session."
    if elsewhere:
        said += f" It still holds: it also {_comes_from(elsewhere[0])}."
    return said, "info"


def _remove_from_file(
    app: ProctorApp, file: RuleFile, kind: RuleBehavior, text: str, same: list[PermissionRule]
) -> tuple[str, NoticeLevel]:
    from core.settings.write import SettingsWriteError, remove_rule

    path = _file_path(app, file)
    try:
        removed = remove_rule(path, kind, text, inside=_project_of(app, file))
    except SettingsWriteError as error:
        return f"/permissions: {error}; no rule was removed.", "error"
    from_file = [r for r in same if r.path == path]
    if not removed and not from_file:
        return f"/permissions: {path} has no {kind} rule {text}; nothing was changed.", "warning"
    _drop(app, from_file)
    said = f"Removed the {kind} rule {text} from {path}; it no longer applies."
    if still := [r for r in same if r not in from_file]:
        said = f"Removed the {kind} rule {text} from {path}, but it still {_comes_from(still[0])}."
    return said, "info"


def _comes_from(rule: PermissionRule) -> str:
    """Where a rule lives, and how to take it out there."""
    flag = next((f for f, source in FLAGS.items() if source == rule.source), None)
    if flag is not None and rule.path is not None:
        return f"comes from {rule.path}: add {flag} to remove it there"
    return f"comes from {rule.path or rule.source}; remove it there"


def _drop(app: ProctorApp, rules: list[PermissionRule]) -> None:
    assert app.live is not None
    app.live.store.set(
        lambda s: s.with_permission_context(
            replace(
                s.permission_context,
                rules=tuple(r for r in s.permission_context.rules if r not in rules),
            )
        )
    )


def _canonical(text: str) -> str:
    from core.access.rules import parse_rule

    return str(parse_rule(text, "allow"))
