"""The decision chain: hooks, rules, the tool's own check, the mode, then the user.

Order follows seed 002 section 4.4.4, and every step fails closed:

1. a PreToolUse hook's deny ends it, and so does a call outside a running skill's
   `allowed-tools` (skill_scope.py);
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
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Protocol

from ..access.context import PermissionRule, RuleBehavior
from ..access.decision import (
    BY_ACCEPT_EDITS,
    BY_BYPASS,
    BY_READ_ONLY,
    Allow,
    Ask,
    DecidedBy,
    Deny,
    PermissionDecision,
    Risk,
    nobody_to_answer,
    undecided,
)
from ..access.paths import PROTECTED_NAMES, absolute, both_forms, protected_part
from ..access.rules import parse_rule, rule_names_tool
from ..access.targets import DomainTarget, NameTarget, PathTarget, rule_family
from ..bash import SimpleCommand, strip_safe_assignments, unwrap
from ..bash.readonly import command_problem
from ..hooks import PreToolUseOutcome
from ..ports import Approve, PermissionAnswer, PermissionRequest
from ..tool import PASSTHROUGH, PermissionResult, Tool, ToolContext
from .audit import AuditLog
from .call import MAX_SCRIPT_DEPTH, Call, expand_home, prepare, program_of
from .globs import is_glob
from .match import (
    allowing_rule,
    bash_allowed_by,
    bash_rule_hits,
    bash_rule_may_hit,
    command_runs,
    specifier_applies,
    target_matches,
)
from .reach import reach_of, symlink_out, tree_holds
from .sandboxing import SandboxView, choose_sandbox
from .shell_reach import (
    UNKNOWN_PATHS,
    critical_removal,
    first_outside,
    removable,
    removed_paths,
    shell_paths_hit,
)
from .skill_scope import skill_refusal
from .suggest import command_rule

PLAN_MODE_MESSAGE = (
    "Plan mode is on, so only reading and exploring is allowed: {tool} would change things "
    "and was not run. Finish exploring, write your plan, and present it with ExitPlanMode."
)
FILESYSTEM_COMMANDS = frozenset({"mkdir", "touch", "mv", "cp", "rm", "rmdir"})
_BYPASS = BY_BYPASS
_PLAN = DecidedBy("mode", "plan mode")
_PLAN_FILE = DecidedBy("mode", "plan mode (the plan file)")
_READ_ONLY = BY_READ_ONLY
_ACCEPT_EDITS = BY_ACCEPT_EDITS
_DONT_ASK = DecidedBy("mode", "don't ask mode")

RememberRule = Callable[[str], Path]


class SandboxSource(Protocol):
    """The session's sandbox as the chain sees it (`session_sandbox.SessionSandbox`)."""

    async def view(self) -> SandboxView: ...


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
        self, tool: Tool[Any, Any], input: Any, context: ToolContext, hook: PreToolUseOutcome
    ) -> PermissionDecision:
        permissions = context.permission_context
        try:
            call = prepare(tool, input, context.cwd, permissions, tool.shell_directory(context))
            permissions = call.permissions
            own = await tool.check_permissions(input, context)
            sandboxed = self.sandbox is not None and tool.sandboxable
            view = await self.sandbox.view() if sandboxed and self.sandbox else None
            decision = evaluate(call, hook, own, view)
        except Exception as error:
            # Refused here rather than by the executor, so the audit log says why.
            decision = undecided(tool.name, error)
        if isinstance(decision, Ask) and permissions.avoid_prompts:
            # Refused here rather than by the executor, so the audit log says it was refused.
            decision = nobody_to_answer(tool.name, decision)
        if self.audit is not None:
            self.audit.decision(
                context.tool_use_id, tool.name, input, decision, permissions, context.agent_label
            )
        return decision

    async def record_answer(
        self, request: PermissionRequest, answer: PermissionAnswer, context: ToolContext
    ) -> None:
        text = _rule_to_keep(request, answer)
        if self.audit is not None:
            self.audit.answer(request, answer, text)
        if text is None or not isinstance(answer, Approve):
            return
        rule = parse_rule(text, "allow", source="session")
        context.set_app_state(
            lambda state: state.with_permission_context(state.permission_context.with_rules(rule))
        )
        if answer.scope == "always" and self.remember is not None:
            self.remember(str(rule))


def _rule_to_keep(request: PermissionRequest, answer: PermissionAnswer) -> str | None:
    """The rule a "yes" for the session or always keeps: the one the person chose, else the
    request's first suggestion, else the tool; None when nothing is kept."""
    if not isinstance(answer, Approve) or answer.scope == "once":
        return None
    text = answer.rule or (request.suggestions[0] if request.suggestions else None)
    if text is None and request.sandbox is not None:
        # A command with no narrow rule to keep: keeping the tool would allow every
        # command, which nobody said. This once only.
        return None
    return text or request.tool_name


def evaluate(
    call: Call,
    hook: PreToolUseOutcome,
    own: PermissionResult = PASSTHROUGH,
    sandbox: SandboxView | None = None,
) -> PermissionDecision:
    """The whole chain for one prepared call (the tool's own check already awaited), with
    the sandbox policy a command runs under. In don't-ask mode whatever would ask is
    refused, whichever step asked (a rule, a hook, the sandbox)."""
    decision = choose_sandbox(call, _evaluate(call, hook, own), sandbox)
    if isinstance(decision, Ask) and call.permissions.mode == "dontAsk":
        return Deny(_DONT_ASK, f"{decision.message} This session does not ask, so it was not run.")
    return decision


def _evaluate(call: Call, hook: PreToolUseOutcome, own: PermissionResult) -> PermissionDecision:
    name, mode = call.name, call.permissions.mode
    if hook.permission == "deny":
        return Deny(_by_hook(hook), hook.reason or f"A PreToolUse hook blocked {name}.")
    if refused := skill_refusal(call, allowed_by_rules):
        return refused

    if found := find_rule(call, "deny"):
        rule, certain = found
        if certain:
            return Deny(_by_rule(rule), f"{name} was denied by {rule.describe()}.")
        return Ask(
            _by_rule(rule),
            f"{_capital(rule.describe())} may cover this call, and {name} cannot tell, so it asks.",
            suggestions=suggest_rules(call),
            risk="high",
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
                risk="high",
            )
        return Allow(_BYPASS)

    # Plan mode refuses changes whatever the allow rules say; they still allow reads.
    planning = mode == "plan" and not _is_read_only(call) and not _edits_plan_file(call)
    if not planning and (rules := allowed_by_rules(call)):
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
        if found := shell_paths_hit(call, rules, behavior):
            return found
        if inner is not None:
            return inner
    return (uncertain, False) if uncertain else None


def _scripts_hit(
    call: Call, behavior: RuleBehavior, depth: int
) -> tuple[PermissionRule, bool] | None:
    """Rules hit by the scripts the parts run (`bash -c 'cat .env'`, `eval "rm x"`), each
    judged as a command of its own, from every directory its part may run in."""
    assert call.analysis is not None
    maybe: tuple[PermissionRule, bool] | None = None
    for index, command in enumerate(call.analysis.commands):
        for script in command_runs(call.analysis, command).scripts:
            if depth >= MAX_SCRIPT_DEPTH:
                rules = call.permissions.rules_with(behavior)
                return (rules[0], False) if rules else None
            for inner in call.script_calls(index, script):
                found = find_rule(inner, behavior, depth + 1)
                if found is not None and found[1]:
                    return found
                maybe = maybe or found
    return maybe


def _glob_may_match(rule: PermissionRule, command: SimpleCommand) -> bool:
    """Whether the command's words, globs read as patterns, could be the rule's first words."""
    assert command.argv is not None and rule.content is not None
    wanted = rule.content.removesuffix(":*").removesuffix(" *").split()
    words = unwrap(command.argv)
    if len(words) < len(wanted):
        return False
    # A program may be named by its path, globbed there too (`/usr/bin/gi? push`).
    return all(
        want in (word, os.path.basename(word))
        if not is_glob(word)
        else fnmatchcase(want, word) or fnmatchcase(want, os.path.basename(word))
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
            target = (
                PathTarget(absolute(expand_home(written), call.cwd), "edit") if written else None
            )
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
    outside = first_outside(call) if read_only else None
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
    return Ask(decided_by, message, suggestions=suggest_rules(call), risk=_risk(call, outside))


def _risk(call: Call, outside: str | None) -> Risk:
    """High for what reaches outside, touches a protected path, may remove what is critical,
    or cannot be read exactly; medium for the rest."""
    if outside is not None or call.shell_problem:
        return "high"
    target = call.target
    if isinstance(target, PathTarget):
        beyond = not call.inside(target.path)
        return "high" if beyond or protected_part(target.path, call.cwd) else "medium"
    analysis = call.analysis
    if analysis is None:
        return "medium"
    if not analysis.ok or analysis.has_substitution or critical_removal(call):
        return "high"
    named = [
        path
        for index in range(len(analysis.commands))
        for path in call.command_paths(index, for_write=True) or ()
    ]
    for path in (*named, *call.writes()):
        if path is None or not call.inside(path) or protected_part(path, call.cwd):
            return "high"
    return "medium"


def _is_read_only(call: Call) -> bool:
    if call.analysis is not None and not call.analysis.read_only:
        return False
    try:
        return bool(call.tool.is_read_only(call.input))
    except Exception:
        return False


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
        removed = removed_paths(call, index)
        if removed is UNKNOWN_PATHS or any(not removable(call, p) for p in removed or ()):
            return False
        reach = reach_of(command, paths)
        if (
            program_of(command) == "cp"
            and reach.trees
            and any(tree_holds(absolute(tree, call.cwd), _is_protected) for tree in reach.trees)
        ):
            return False  # `cp -r . copy` would write copy/.git, copy/.claude...
        if reach.follows_symlinks and any(
            symlink_out(absolute(tree, call.cwd), call.inside) for tree in reach.trees
        ):
            return False  # `cp -rL` copies in what a symlink out of the project points at
        # Redirections were checked as edits just above (touched_paths includes them).
        if program_of(command) not in FILESYSTEM_COMMANDS and command_problem(command):
            return False
    return all(w is not None and _editable(call, w) for w in call.writes())


def _is_protected(path: Path) -> bool:
    return path.name.lower() in PROTECTED_NAMES


def _editable(call: Call, path: str | Path) -> bool:
    return (
        call.inside(path)
        and protected_part(expand_home(path), call.cwd) is None
        and not _runs_outside_the_sandbox(call, path)
    )


def _runs_outside_the_sandbox(call: Call, path: str | Path) -> bool:
    """A hook script or an MCP server's file: what is written there runs, later, unfenced."""
    programs = call.permissions.protected_files
    return bool(programs) and any(
        form in programs for form in both_forms(expand_home(path), call.cwd)
    )


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
    if isinstance(target, NameTarget):
        return (
            DecidedBy("default", "no rule allows it"),
            f"{name} would load {target.name!r}, and no rule allows it.",
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
    if isinstance(target, NameTarget):
        return (f"{call.name}({target.name})",)
    return (call.name,)


def _by_rule(rule: PermissionRule) -> DecidedBy:
    return DecidedBy("rule", rule.describe())


def _by_hook(hook: PreToolUseOutcome) -> DecidedBy:
    return DecidedBy("hook", hook.source)


def _by_tool(name: str) -> DecidedBy:
    return DecidedBy("tool", f"{name}'s own check")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
