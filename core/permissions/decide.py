"""The decision chain: hooks, rules, the tool's own check, the mode, then the user.

Order follows seed 002 section 4.4.4, and every step fails closed:

1. a PreToolUse hook's deny ends it;
2. deny rules, then ask rules: a hook's allow can never get past them;
3. the tool's own `check_permissions` (deny and ask stand; allow ends it);
4. a hook's allow or ask;
5. bypassPermissions allows, except removing a critical path, which asks;
6. allow rules (for a shell command: every part must be allowed);
7. the mode: read-only calls inside the working directories run; acceptEdits also runs edits
   and filesystem commands inside them; plan refuses changes; dontAsk refuses what would ask;
   everything else asks the user.

A specifier rule that names the tool but cannot be checked against the call (the tool does
not say what its input touches) asks rather than guesses. Every decision says what made it
(`DecidedBy`) in words a person can check, and goes to the audit log when there is one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Protocol

from ..bash import (
    BashAnalysis,
    SimpleCommand,
    analyze,
    strip_safe_assignments,
    touched_paths,
    unwrap,
)
from ..bash.commands import READ_ONLY
from ..bash.flags import scan
from ..bash.paths import argv_paths
from ..bash.readonly import command_problem
from ..bash.wrappers import WRAPPERS, base_name, unwrap_once
from ..hooks import PreToolUseOutcome
from ..ports import Approve, PermissionAnswer, PermissionRequest
from ..tool import PASSTHROUGH, PermissionResult, Tool, ToolContext
from .audit import AuditLog
from .context import PermissionRule, RuleBehavior, ToolPermissionContext
from .decision import (
    BY_ACCEPT_EDITS,
    BY_BYPASS,
    BY_READ_ONLY,
    Allow,
    Ask,
    DecidedBy,
    Deny,
    PermissionDecision,
)
from .git_history import known_paths, repository_of
from .globs import expand, is_glob
from .match import (
    allowing_rule,
    bash_allowed_by,
    bash_rule_hits,
    bash_rule_may_hit,
    command_runs,
    rule_base,
    specifier_applies,
    target_matches,
    word_tokens,
)
from .paths import (
    PROTECTED_NAMES,
    absolute,
    compile_pattern,
    inside_working_dirs,
    is_critical,
    is_within,
    protected_part,
)
from .reach import Reach, names_split_whole, reach_of, symlink_out, tree_holds
from .rules import parse_rule, rule_names_tool
from .sandboxing import SandboxView, choose_sandbox
from .shell_places import ShellPlaces, shell_places
from .suggest import command_rule
from .targets import (
    CommandTarget,
    DomainTarget,
    PathAccess,
    PathTarget,
    RuleTarget,
    rule_family,
)

PLAN_MODE_MESSAGE = (
    "Plan mode is on, so only reading and exploring is allowed: {tool} would change things "
    "and was not run. Finish exploring, write your plan, and present it with ExitPlanMode."
)
FILESYSTEM_COMMANDS = frozenset({"mkdir", "touch", "mv", "cp", "rm", "rmdir"})
REMOVAL_COMMANDS = frozenset({"rm", "rmdir", "unlink", "shred", "mv"})

_BYPASS = BY_BYPASS
_PLAN = DecidedBy("mode", "plan mode")
_PLAN_FILE = DecidedBy("mode", "plan mode (the plan file)")
_READ_ONLY = BY_READ_ONLY
_ACCEPT_EDITS = BY_ACCEPT_EDITS
_DONT_ASK = DecidedBy("mode", "don't ask mode")

RememberRule = Callable[[str], Path]


class SandboxSource(Protocol):
    """The session's sandbox as the chain sees it (`core.sandbox.session.SessionSandbox`)."""

    async def view(self) -> SandboxView: ...


@dataclass(slots=True)
class Call:
    """What the chain knows about one call, worked out once."""

    tool: Tool[Any]
    input: Any
    cwd: Path
    permissions: ToolPermissionContext
    target: RuleTarget | None
    analysis: BashAnalysis | None
    shell: ShellPlaces | None = None
    """Where each part of a shell command runs (core/permissions/shell_places.py)."""

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def shell_problem(self) -> str:
        """Why where some part of the command runs cannot be told; "" when it can."""
        return self.shell.problem if self.shell is not None else ""

    def places(self, path: str, part: int) -> tuple[str, ...]:
        """A path part `part` of a shell command names, made absolute from every directory
        that part may run in. Not folded: `link/..` must reach both_forms as written."""
        text = os.path.expanduser(path) if path.startswith("~") else path
        if text.startswith("~"):
            return ()  # `~+`, `~-`, `~nobody`: not a home directory this check can name
        if os.path.isabs(text):
            return (text,)
        return tuple(os.path.join(directory, text) for directory in self._dirs(part))

    def command_paths(self, part: int, *, for_write: bool) -> tuple[str, ...] | None:
        """The absolute paths part `part` touches, from every directory it may run in."""
        assert self.analysis is not None
        command = self.analysis.commands[part]
        found: list[str] = []
        for directory in self._dirs(part):
            paths = command_paths(command, directory, for_write=for_write)
            if paths is None:
                return None
            for path in paths:
                text = os.path.expanduser(path) if path.startswith("~") else path
                if text.startswith("~") or _PROCESS_RELATIVE.match(text):
                    # `~+` is $PWD and `~-` $OLDPWD to bash; `~nobody` is nothing; and
                    # /proc/self/cwd is where the *command* runs, not where proctor does.
                    return None
                found.append(text if os.path.isabs(text) else os.path.join(directory, text))
        return tuple(dict.fromkeys(found))

    def _dirs(self, part: int) -> tuple[Path, ...]:
        return self.shell.of(part, self.cwd) if self.shell is not None else (self.cwd,)

    def inside(self, path: str | Path) -> bool:
        directories = (self.cwd, *self.permissions.additional_working_directories)
        return inside_working_dirs(_expand(path), self.cwd, directories)

    def writes(self) -> Iterator[str | None]:
        """Files a shell command writes through redirections (None: a target not known)."""
        if self.analysis is not None:
            for part, command in enumerate(self.analysis.commands):
                for redirect in command.redirects:
                    if redirect.writes:
                        places = (
                            () if redirect.target is None else self.places(redirect.target, part)
                        )
                        yield from places or (None,)


class DecisionChain:
    def __init__(
        self,
        *,
        audit: AuditLog | None = None,
        remember: RememberRule | None = None,
        sandbox: SandboxSource | None = None,
    ) -> None:
        """`remember` keeps an "always allow" rule (writes it to the local settings file);
        `sandbox` says what the session's sandbox can do (None: there is none)."""
        self.audit = audit
        self.remember = remember
        self.sandbox = sandbox

    async def decide(
        self, tool: Tool[Any], input: Any, context: ToolContext, hook: PreToolUseOutcome
    ) -> PermissionDecision:
        call = prepare(
            tool, input, context.cwd, context.permission_context, tool.shell_directory(context)
        )
        own = await tool.check_permissions(input, context)
        view = await self.sandbox.view() if self.sandbox is not None and tool.sandboxable else None
        decision = evaluate(call, hook, own, view)
        if self.audit is not None:
            self.audit.decision(context.tool_use_id, tool.name, input, decision, call.permissions)
        return decision

    async def record_answer(
        self, request: PermissionRequest, answer: PermissionAnswer, context: ToolContext
    ) -> None:
        if self.audit is not None:
            self.audit.answer(request, answer)
        if not isinstance(answer, Approve) or answer.scope == "once":
            return
        text = answer.rule or (request.suggestions[0] if request.suggestions else None)
        if text is None:
            if request.sandbox is not None:
                # A command with no narrow rule to keep: keeping the tool would allow every
                # command, which nobody said. This once only.
                return
            text = request.tool_name
        rule = parse_rule(text, "allow", source="session")
        context.set_app_state(
            lambda state: state.with_permission_context(state.permission_context.with_rules(rule))
        )
        if answer.scope == "always" and self.remember is not None:
            self.remember(str(rule))


def prepare(
    tool: Tool[Any],
    input: Any,
    cwd: Path,
    permissions: ToolPermissionContext,
    shell_cwd: Path | None = None,
) -> Call:
    """`cwd` is the project (rules and working directories are judged from it); `shell_cwd`
    is where a shell command starts, which an earlier `cd` may have moved."""
    try:
        target = tool.rule_target(input, cwd)
    except Exception:
        target = None
    if not isinstance(target, CommandTarget):
        return Call(tool, input, cwd, permissions, target, None)
    analysis = analyze(target.command)
    shell = shell_places(analysis, shell_cwd or cwd)
    return Call(tool, input, cwd, permissions, target, analysis, shell)


def evaluate(
    call: Call,
    hook: PreToolUseOutcome,
    own: PermissionResult = PASSTHROUGH,
    sandbox: SandboxView | None = None,
) -> PermissionDecision:
    """The whole chain for one prepared call (the tool's own check already awaited), with
    the sandbox policy a command runs under."""
    return choose_sandbox(call, _evaluate(call, hook, own), sandbox)


def _evaluate(call: Call, hook: PreToolUseOutcome, own: PermissionResult) -> PermissionDecision:
    name, mode = call.name, call.permissions.mode
    if hook.permission == "deny":
        return Deny(_by_hook(hook), hook.reason or f"A PreToolUse hook blocked {name}.")

    if found := find_rule(call, "deny"):
        rule, certain = found
        if certain:
            return Deny(_by_rule(rule), f"{name} was denied by {rule.describe()}.")
        return Ask(
            _by_rule(rule),
            f"{_capital(rule.describe())} may cover this call, and {name} cannot tell, so it asks.",
            suggestions=suggest_rules(call),
        )
    if found := find_rule(call, "ask"):
        rule, _ = found
        return Ask(
            _by_rule(rule),
            f"{_capital(rule.describe())} asks before this call.",
            suggestions=suggest_rules(call),
        )

    if own.behavior == "deny":
        return Deny(_by_tool(name), own.message or f"{name} refused this call.")
    if own.behavior == "ask" and mode != "bypassPermissions":
        return Ask(
            _by_tool(name),
            own.message or f"{name} needs approval.",
            suggestions=own.suggestions or suggest_rules(call),
            updated_input=own.updated_input,
        )
    if own.behavior == "allow":
        return Allow(_by_tool(name), own.updated_input)

    if hook.permission == "allow":
        return Allow(_by_hook(hook), hook.updated_input)
    if hook.permission == "ask":
        return Ask(
            _by_hook(hook),
            hook.reason or f"A PreToolUse hook asks about {name}.",
            suggestions=suggest_rules(call),
        )

    if mode == "bypassPermissions":
        if critical := critical_removal(call):
            return Ask(
                DecidedBy("analysis", f"removing {critical}"),
                f"This would remove {critical}; that always asks, even when permissions "
                "are bypassed.",
            )
        return Allow(_BYPASS)

    if rules := allowed_by_rules(call):
        return Allow(DecidedBy("rule", " and ".join(rule.describe() for rule in rules)))
    return decide_by_mode(call)


def find_rule(
    call: Call, behavior: RuleBehavior, depth: int = 0
) -> tuple[PermissionRule, bool] | None:
    """The deny (or ask) rule covering this call, and whether it surely does. A specifier
    rule for this tool that the call cannot be checked against is a rule that may cover it.
    A script a command runs (`bash -c '...'`) is judged as a call of its own (`depth` deep)."""
    if not call.permissions.rules:
        return None  # the common case: skip building per-behaviour lists on every call
    rules = call.permissions.rules_with(behavior)
    if not rules:
        return None
    uncertain: PermissionRule | None = None
    for rule in rules:
        if rule.content is None:
            if rule_names_tool(rule.tool_name, call.name):
                return rule, True
        elif call.analysis is not None and rule.tool_name == call.name:
            continue  # shell commands are matched part by part below
        elif call.target is not None and specifier_applies(rule, call.name, call.target):
            if target_matches(rule, call.target, call.cwd, behavior):
                return rule, True
        elif call.target is None and rule_names_tool(rule.tool_name, call.name):
            uncertain = uncertain or rule
    if call.analysis is not None:
        own_rules = [r for r in rules if r.tool_name == call.name and r.content is not None]
        if hit := bash_rule_hits(own_rules, call.analysis, behavior):
            return hit, True
        inner = _scripts_hit(call, behavior, depth)
        if inner is not None and inner[1]:
            return inner
        for command in call.analysis.commands:
            # Words known only when bash runs (`git {push,x}`, `$g push`) may spell what a
            # rule names, and so may a glob that matches its words (`git pus?`).
            for rule in own_rules:
                if command.argv is None or (command.wild and _glob_may_match(rule, command)):
                    return rule, False
        if maybe := bash_rule_may_hit(own_rules, call.analysis):
            return maybe, False
        if found := _shell_paths_hit(call, rules, behavior):
            return found
        if inner is not None:
            return inner
    return (uncertain, False) if uncertain else None


_MAX_SCRIPT_DEPTH = 6


def _scripts_hit(
    call: Call, behavior: RuleBehavior, depth: int
) -> tuple[PermissionRule, bool] | None:
    """Rules hit by the scripts the parts run (`bash -c 'cat .env'`, `eval "rm x"`), each
    judged as a command of its own, from every directory its part may run in."""
    assert call.analysis is not None
    maybe: tuple[PermissionRule, bool] | None = None
    for index, command in enumerate(call.analysis.commands):
        for script in command_runs(call.analysis, command).scripts:
            if depth >= _MAX_SCRIPT_DEPTH:
                rules = call.permissions.rules_with(behavior)
                return (rules[0], False) if rules else None
            analysis = analyze(script)
            for start in call.shell.of(index, call.cwd) if call.shell else (call.cwd,):
                inner = Call(
                    call.tool,
                    call.input,
                    call.cwd,
                    call.permissions,
                    CommandTarget(script),
                    analysis,
                    shell_places(analysis, start),
                )
                found = find_rule(inner, behavior, depth + 1)
                if found is not None and found[1]:
                    return found
                maybe = maybe or found
    return maybe


def _shell_paths_hit(
    call: Call, rules: tuple[PermissionRule, ...], behavior: RuleBehavior
) -> tuple[PermissionRule, bool] | None:
    """Path rules apply to what a command touches: `cat .env` is a read of .env, `> out` an
    edit of out. A redirection whose target is not known may be anything."""
    path_rules = [r for r in rules if r.content is not None and rule_family(r.tool_name)]
    if not path_rules:
        return None
    assert call.analysis is not None
    seen: list[tuple[PathAccess, str]] = []
    mentioned: tuple[PermissionRule, bool] | None = None  # a may-hit, after any sure one
    read_rules = [r for r in path_rules if rule_family(r.tool_name) == "read"]
    if call.shell_problem or not call.analysis.ok:
        return path_rules[0], False  # not read as bash will run it: it may touch anything
    for index, command in enumerate(call.analysis.commands):
        paths = call.command_paths(index, for_write=False)
        unknown_redirect = any(
            r.target is None and not r.operator.startswith("<<") for r in command.redirects
        )
        if paths is None and (command.wild or command.argv is None or unknown_redirect):
            # A glob, or words known only when bash runs (`cat {.env,x}`, `cat $f`, `< .en?`):
            # they may name anything.
            return path_rules[0], False
        if paths is None and command.argv and os.path.basename(command.argv[0]) == "xargs":
            fed = _fed_by_find(call, index)
            if fed is None:
                return path_rules[0], False  # xargs reads names from anywhere
            roots, own = fed
            for rule in read_rules:
                if any(_may_cover_below(rule, call, tree) for tree in roots):
                    return rule, False
            paths = tuple(place for path in own for place in call.places(path, index))
        if paths is None and _program(command) in READ_ONLY:
            return path_rules[0], False  # a reader whose files are not known (names from -)
        for path in paths or ():
            seen += [("read", path), ("edit", path)]
        removed = _removed_paths(call, index)
        if removed is _UNKNOWN_PATHS:
            return path_rules[0], False
        for tree in removed or ():
            # Removing a directory edits everything below it.
            where = absolute(_expand(tree), call.cwd)
            for rule in path_rules:
                if rule_family(rule.tool_name) == "edit" and _covers_below(rule, call, where):
                    return rule, True
        mentioned = mentioned or _mentioned_path_hit(call, index, path_rules, behavior)
        reach = reach_of(command, paths or ())
        seen += [("read", path) for path in _object_places(call, index, reach)]
        history = reach.history or reach.tracked_files  # what git holds, not the tree
        if history and (found := _history_hit(call, index, reach, read_rules, behavior)):
            return found
        trees = reach.trees if reach.reads_content else ()
        trees = tuple(place for tree in trees for place in call.places(tree, index))
        for rule in read_rules:
            if not mentioned and any(_may_cover_below(rule, call, tree) for tree in trees):
                mentioned = (rule, False)  # it may read what the rule covers, or may not
    for written in call.writes():
        if written is None:
            return path_rules[0], False
        seen.append(("edit", written))
    for access, path in seen:
        target = PathTarget(
            absolute(_expand(path), call.cwd), "edit" if access == "edit" else "read"
        )
        for rule in path_rules:
            if rule_family(rule.tool_name) == target.access and target_matches(
                rule, target, call.cwd, behavior
            ):
                return rule, True
    return mentioned


def _object_places(call: Call, part: int, reach: Reach) -> list[str]:
    """Where `REV:path` operands are: from the repository's top (`HEAD:path`), or from where
    git runs for `HEAD:./path`."""
    places: list[str] = []
    where = [p for d in reach.repository for p in call.places(d, part)] or call.places(".", part)
    for path in reach.object_paths:
        if path.startswith(("./", "../")) or path in (".", ".."):
            places += [os.path.join(directory, path) for directory in where]
            continue
        for directory in where:
            repository = repository_of(Path(directory))
            places.append(os.path.join(repository.top if repository else directory, path))
    return places


def _history_hit(
    call: Call, part: int, reach: Reach, rules: list[PermissionRule], behavior: RuleBehavior
) -> tuple[PermissionRule, bool] | None:
    """A git command printing content out of history (or every tracked file, `git grep`)
    may print any path the repository holds or held, within its pathspec: a Read rule
    covering one of those may cover it."""
    if not rules:
        return None
    where = [p for d in reach.repository for p in call.places(d, part)]
    limits = [
        absolute(place, call.cwd)
        for spec in reach.pathspec or ()
        for place in call.places(spec, part)
    ]
    for directory in where or call.places(".", part):
        if reach.tracked_files and repository_of(Path(directory)) is None:
            # Outside a repository, `git grep` may search the directory itself, as grep -r
            # does (`grep.fallbackToNoIndex`).
            for rule in rules:
                if _may_cover_below(rule, call, directory):
                    return rule, False
            continue
        known = known_paths(Path(directory))
        if known is None:
            return rules[0], False
        for path in known:
            if limits and not any(is_within(path, limit) for limit in limits):
                continue
            target = PathTarget(path, "read")
            for rule in rules:
                if target_matches(rule, target, call.cwd, behavior):
                    return rule, False
    return None


def _covers_below(rule: PermissionRule, call: Call, tree: Path) -> bool:
    """Whether an Edit rule covers anything below `tree` (deny and ask rules only)."""

    def covered(path: Path) -> bool:
        return target_matches(rule, PathTarget(path, "edit"), call.cwd, "deny")

    return tree_holds(tree, covered)


def _mentioned_path_hit(
    call: Call, part: int, path_rules: list[PermissionRule], behavior: RuleBehavior
) -> tuple[PermissionRule, bool] | None:
    """A command that is not known to treat its words as data may open any path it mentions
    (`bash -c 'cat .env'`, `python3 -c 'open(".env")'`), or any at all when it runs a script
    from its input: such a path under a rule is a path the rule may cover."""
    assert call.analysis is not None
    command = call.analysis.commands[part]
    runs = command_runs(call.analysis, command)
    if runs.unseen:
        return path_rules[0], False
    if not runs.commands and (call.analysis.read_only or not command_problem(command)):
        return None
    for token in word_tokens((command.argv or ())[1:]):
        if token.startswith("-"):
            continue
        for place in call.places(token, part):
            where = absolute(place, call.cwd)
            for rule in path_rules:
                family = rule_family(rule.tool_name)
                if family and target_matches(rule, PathTarget(where, family), call.cwd, behavior):
                    return rule, False
    return None


def _may_cover_below(rule: PermissionRule, call: Call, tree: str) -> bool:
    """Whether a path rule may cover something below `tree` (a directory read whole)."""
    assert rule.content is not None
    base = absolute(_expand(tree), call.cwd)
    pattern = compile_pattern(rule.content, "deny", cwd=call.cwd, base=rule_base(rule, call.cwd))
    if not pattern.roots:
        return True  # `.env` anywhere
    for root in pattern.roots:
        start = root.joinpath(*pattern.literal_parts())
        if is_within(start, base) or is_within(base, start):
            return True
    return False


def _glob_may_match(rule: PermissionRule, command: SimpleCommand) -> bool:
    """Whether the command's words, globs read as patterns, could be the rule's first words."""
    assert command.argv is not None and rule.content is not None
    wanted = rule.content.removesuffix(":*").removesuffix(" *").split()
    words = unwrap(command.argv)
    if len(words) < len(wanted):
        return False
    return all(
        fnmatchcase(want, word) if is_glob(word) else want == os.path.basename(word) or want == word
        for want, word in zip(wanted, words, strict=False)
    )


def allowed_by_rules(call: Call) -> tuple[PermissionRule, ...]:
    if not call.permissions.rules:
        return ()
    rules = call.permissions.rules_with("allow")
    if not rules:
        return ()
    for rule in rules:
        if rule.content is None and rule_names_tool(rule.tool_name, call.name):
            return (rule,)
    if call.analysis is not None:
        used = bash_allowed_by([r for r in rules if r.tool_name == call.name], call.analysis)
        if used is None:
            return ()
        for written in call.writes():
            target = PathTarget(absolute(_expand(written), call.cwd), "edit") if written else None
            edit_rule = target and next(
                (
                    r
                    for r in rules
                    if r.content is not None
                    and rule_family(r.tool_name) == "edit"
                    and target_matches(r, target, call.cwd, "allow")
                ),
                None,
            )
            if not edit_rule:
                return ()
            used += (edit_rule,)
        return used
    if call.target is None:
        return ()
    for rule in rules:
        applies = rule.content is not None and specifier_applies(rule, call.name, call.target)
        if applies and target_matches(rule, call.target, call.cwd, "allow"):
            return (rule,)
    return ()


def decide_by_mode(call: Call) -> PermissionDecision:
    mode, name = call.permissions.mode, call.name
    read_only = _is_read_only(call)
    outside = _first_outside(call) if read_only else None
    if mode == "plan":
        if _edits_plan_file(call):
            return Allow(_PLAN_FILE)
        if not read_only:
            return Deny(_PLAN, PLAN_MODE_MESSAGE.format(tool=name))
    if read_only and outside is None:
        return Allow(_READ_ONLY)
    if mode == "acceptEdits" and _accepted_edit(call):
        return Allow(_ACCEPT_EDITS)
    decided_by, message = _why_ask(call, read_only, outside)
    if mode == "dontAsk":
        return Deny(_DONT_ASK, f"{message} This session does not ask, so it was not run.")
    return Ask(decided_by, message, suggestions=suggest_rules(call))


def _is_read_only(call: Call) -> bool:
    if call.analysis is not None and not call.analysis.read_only:
        return False
    try:
        return bool(call.tool.is_read_only(call.input))
    except Exception:
        return False


def _first_outside(call: Call) -> str | None:
    """The first thing a read-only call reaches outside the working directories, if any."""
    target = call.target
    if isinstance(target, PathTarget):
        return None if call.inside(target.path) else str(target.path)
    if isinstance(target, DomainTarget):
        return target.host
    if call.analysis is not None:
        if call.shell_problem:
            return f"where it runs ({call.shell_problem})"
        for directory in call.shell.every() if call.shell else ():
            if not call.inside(directory):
                return f"{directory} (where it runs)"
        for index, command in enumerate(call.analysis.commands):
            paths = call.command_paths(index, for_write=False)
            if paths is None and (fed := _fed_by_find(call, index)) is not None:
                roots = tuple(p for x in fed[0] for p in call.places(x, index))
                for root in roots:
                    # The command after find opens what find names: a symlink, followed.
                    found = symlink_out(absolute(root, call.cwd), call.inside)
                    if found is not None:
                        return f"{found} (a symlink `{command.text}` opens)"
                paths = roots + tuple(p for x in fed[1] for p in call.places(x, index))
            if paths is None:
                return f"what `{command.text}` reads (its paths could not be told)"
            paths = tuple(p for p in paths if p not in HARMLESS_READS)
            reach = reach_of(command, paths)
            for place in _object_places(call, index, reach):
                if not call.inside(place):
                    return f"{place} (read out of git's objects)"
            if reach.follows_symlinks:
                for place in (p for tree in reach.trees for p in call.places(tree, index)):
                    found = symlink_out(absolute(place, call.cwd), call.inside)
                    if found is not None:
                        return f"{found} (`{command.text}` follows symlinks)"
            for path in paths:
                if not call.inside(path):
                    return path
    return None


HARMLESS_READS = frozenset({"/dev/null", "/dev/zero", "/dev/stdin", "/dev/urandom", "/dev/random"})


def _fed_by_find(call: Call, index: int) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """`find ROOTS ... | xargs CMD ARGS`: xargs gives CMD names that find found below its
    roots (symlinks aside: find without -L does not follow), beside CMD's own ARGS. Returns
    (roots, CMD's own paths), or None when that cannot be told (xargs reading names from a
    file with -a, operands that are not known)."""
    assert call.analysis is not None
    commands = call.analysis.commands
    command = commands[index]
    if index == 0 or not command.argv or os.path.basename(command.argv[0]) != "xargs":
        return None
    previous = commands[index - 1]
    if not previous.argv or os.path.basename(previous.argv[0]) != "find":
        return None
    if "-L" in previous.argv or "-follow" in previous.argv:
        return None
    joined = re.escape(previous.text) + r"\s*\|\s*" + re.escape(command.text)
    if re.search(joined, call.analysis.command) is None:
        return None
    options = scan(command.argv[1:], WRAPPERS["xargs"])
    inner = unwrap_once(command.argv)
    roots = touched_paths(previous)
    if options.unknown or options.paths or inner is None or roots is None:
        return None
    whole = options.has("-0", "--null") and "-print0" in previous.argv
    directories = call.shell.of(index - 1, call.cwd) if call.shell else (call.cwd,)
    if not whole and not all(
        names_split_whole(absolute(_expand(root), directory))
        for root in roots or (".",)
        for directory in directories
    ):
        return None  # a name with a blank or a quote becomes words of xargs' choosing
    own = argv_paths(inner)
    return None if own is None else (roots, tuple(own))


def _edits_plan_file(call: Call) -> bool:
    plan = call.permissions.plan_file
    target = call.target
    return (
        plan is not None
        and isinstance(target, PathTarget)
        and target.access == "edit"
        and absolute(target.path, call.cwd) == absolute(plan, call.cwd)
    )


def _accepted_edit(call: Call) -> bool:
    """Edits inside the working directories (protected paths excepted), and shell commands
    made only of read-only and filesystem commands on such paths."""
    target = call.target
    if isinstance(target, PathTarget):
        return target.access == "edit" and _editable(call, target.path)
    analysis = call.analysis
    if analysis is None or not analysis.ok or analysis.has_substitution:
        return False
    if call.shell_problem:
        return False
    for index, command in enumerate(analysis.commands):
        paths = call.command_paths(index, for_write=True)
        if paths is None or not all(_editable(call, p) for p in paths):
            return False
        removed = _removed_paths(call, index)
        if removed is _UNKNOWN_PATHS or any(not _removable(call, p) for p in removed or ()):
            return False
        reach = reach_of(command, paths)
        if reach.follows_symlinks and any(
            symlink_out(absolute(tree, call.cwd), call.inside) for tree in reach.trees
        ):
            return False  # `cp -rL` copies in what a symlink out of the project points at
        # Redirections were checked as edits just above (touched_paths includes them).
        if _program(command) not in FILESYSTEM_COMMANDS and command_problem(command):
            return False
    return all(w is not None and _editable(call, w) for w in call.writes())


def _editable(call: Call, path: str | Path) -> bool:
    return call.inside(path) and protected_part(_expand(path), call.cwd) is None


def _removable(call: Call, path: str) -> bool:
    """Removing (or moving away) a path takes everything below it: never the project or a
    parent of it, and never a directory that holds a protected one (`vendor/lib/.git`)."""
    where = absolute(_expand(path), call.cwd)
    if is_critical(where, call.cwd):
        return False
    return not tree_holds(where, lambda below: below.name.lower() in PROTECTED_NAMES)


def critical_removal(call: Call, depth: int = 0) -> str | None:
    """The critical path a shell command would remove or move away, if any: in its own
    parts, in the scripts they run (`bash -c 'rm -rf /'`), and where what it removes cannot
    be told (`rm -rf "$HOME"`)."""
    if call.analysis is None:
        return None
    unknown = "paths that could not be told (they depend on the shell)"
    for index, command in enumerate(call.analysis.commands):
        removed = _removed_paths(call, index)
        if removed is _UNKNOWN_PATHS or (removed and call.shell_problem):
            return unknown
        for path in removed or ():
            if is_critical(_expand(path), call.cwd):
                return path
        runs = command_runs(call.analysis, command)
        for inner in runs.commands:
            first = inner.words[0] if inner.words else None
            if inner.exact is None and (first is None or base_name(first) in REMOVAL_COMMANDS):
                return unknown  # `find ~ -exec rm -rf {} +`: what it removes is found later
        for script in runs.scripts:
            if depth >= _MAX_SCRIPT_DEPTH:
                return unknown
            analysis = analyze(script)
            for start in call.shell.of(index, call.cwd) if call.shell else (call.cwd,):
                inner_call = replace(
                    call,
                    target=CommandTarget(script),
                    analysis=analysis,
                    shell=shell_places(analysis, start),
                )
                if found := critical_removal(inner_call, depth + 1):
                    return found
    return None


_UNKNOWN_PATHS: tuple[str, ...] = ("?",)
_PROCESS_RELATIVE = re.compile(r"/proc/(?:self|thread-self|\d+)/(?:cwd|root|fd)(?:/|$)|/dev/fd/")
_REMOVES = re.compile(r"(?:^|[\s/;&|(`])(?:rm|rmdir|unlink|shred|mv)\b|-delete\b")


def _removed_paths(call: Call, part: int) -> tuple[str, ...] | None:
    """The paths part `part` removes or moves away (None: it removes nothing;
    `_UNKNOWN_PATHS`: it may, but where cannot be told)."""
    assert call.analysis is not None
    command = call.analysis.commands[part]
    if command.argv is None:
        return _UNKNOWN_PATHS if _REMOVES.search(command.text) else None
    words = unwrap(command.argv)
    program = base_name(words[0]) if words else ""
    if program == "find" and "-delete" in words:
        roots = touched_paths(command)
        if roots is None:
            return _UNKNOWN_PATHS
        return tuple(p for root in roots or (".",) for p in call.places(root, part))
    if program not in REMOVAL_COMMANDS:
        return None
    paths = call.command_paths(part, for_write=True)
    if paths is None:
        return _UNKNOWN_PATHS
    if program == "mv" and len(paths) > 1:
        return paths[:-1]  # the sources go away; the last operand is where they go
    return paths


def _why_ask(call: Call, read_only: bool, outside: str | None) -> tuple[DecidedBy, str]:
    name = call.name
    if call.analysis is not None and not call.analysis.read_only:
        unallowed = _unallowed_part(call)
        reason = (command_problem(unallowed) if unallowed else "") or call.analysis.reason
        return DecidedBy("analysis", reason), f"{_capital(reason)}."
    if read_only and outside is not None:
        return (
            DecidedBy("default", f"reaches {outside}"),
            f"{name} reaches {outside}, outside the working directories.",
        )
    target = call.target
    if isinstance(target, PathTarget) and target.access == "edit":
        part = protected_part(target.path, call.cwd)
        if part is not None:
            return (
                DecidedBy("default", f"{part} is protected"),
                f"{name} would change {target.path}, and {part} is protected.",
            )
        where = "" if call.inside(target.path) else ", outside the working directories"
        return (
            DecidedBy("default", "no rule allows it"),
            f"{name} would change {target.path}{where}.",
        )
    return DecidedBy(
        "default", "no rule allows it"
    ), f"{name} can change things and no rule allows it."


def _allow_rules_for(call: Call) -> list[PermissionRule]:
    return [
        rule
        for rule in call.permissions.rules_with("allow")
        if rule.tool_name == call.name and rule.content is not None
    ]


def _unallowed_part(call: Call) -> SimpleCommand | None:
    """In a compound command some parts of which an allow rule covers: the first part that
    no rule allows and that is not read-only (what the person is really asked about)."""
    rules = _allow_rules_for(call)
    if not rules or call.analysis is None:
        return None
    for command in call.analysis.commands:
        if allowing_rule(rules, command) is None and command_problem(command):
            return command
    return None


def suggest_rules(call: Call) -> tuple[str, ...]:
    """Rules the user could keep to stop being asked about calls like this one."""
    target = call.target
    if call.analysis is not None:
        suggestions: list[str] = []
        allowed = _allow_rules_for(call)
        for command in call.analysis.commands:
            if not command.argv or not command_problem(command):
                continue
            if allowed and allowing_rule(allowed, command) is not None:
                continue
            rule = command_rule(command.argv, call.name, strip_safe_assignments(command) or "")
            if rule is not None and rule not in suggestions:
                suggestions.append(rule)
        commands = call.analysis.commands
        if not suggestions and call.analysis.read_only and len(commands) == 1:
            # A read that asks because it reaches outside: exactly this command, since a
            # prefix (`cat /etc/hostname:*`) would also allow reading anything after it.
            exact = " ".join((strip_safe_assignments(commands[0]) or "").split())
            if exact and not any(char in exact for char in "*()"):
                suggestions.append(f"{call.name}({exact})")
        return tuple(suggestions[:3])
    if isinstance(target, PathTarget):
        family = "Edit" if target.access == "edit" else "Read"
        folder = target.path if target.path.is_dir() else target.path.parent
        if call.inside(folder) and absolute(folder, call.cwd).is_relative_to(call.cwd):
            relative = absolute(folder, call.cwd).relative_to(call.cwd).as_posix()
            return (f"{family}(./**)" if relative == "." else f"{family}({relative}/**)",)
        # Outside the project: that one directory, never a whole tree above it.
        return (f"{family}(/{absolute(folder, call.cwd).as_posix()}/*)",)
    if isinstance(target, DomainTarget):
        return (f"{call.name}(domain:{target.host})",)
    return (call.name,)


def command_paths(command: SimpleCommand, cwd: Path, *, for_write: bool) -> tuple[str, ...] | None:
    """The paths a simple command touches, globs expanded as Bash would (None: not known)."""
    paths = touched_paths(command)
    if paths is None or not command.wild:
        return paths
    # A glob names the files it matches even for a program that opens none of them: `echo
    # /etc/*` lists a directory.
    globbed = tuple(w for w in (command.argv or ())[1:] if is_glob(w) and w not in paths)
    expanded: list[str] = []
    for path in (*paths, *globbed):
        matches = expand(path, cwd, for_write=for_write)
        if matches is None:
            return None
        expanded += matches
    return tuple(expanded)


def _program(command: SimpleCommand) -> str | None:
    if not command.argv:
        return None
    words = unwrap(command.argv)
    return os.path.basename(words[0]) if words else None


def _expand(path: str | Path) -> Path:
    """A shell path as the shell would see it: `~` is the home directory."""
    text = os.fspath(path)
    return Path(os.path.expanduser(text)) if text.startswith("~") else Path(text)


def _by_rule(rule: PermissionRule) -> DecidedBy:
    return DecidedBy("rule", rule.describe())


def _by_hook(hook: PreToolUseOutcome) -> DecidedBy:
    return DecidedBy("hook", hook.source)


def _by_tool(name: str) -> DecidedBy:
    return DecidedBy("tool", f"{name}'s own check")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
