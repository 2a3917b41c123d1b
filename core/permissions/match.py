"""Matching a rule's specifier against a call: commands, paths and domains.

Bash rules are matched against every simple command of a compound command, because
`ls && rm -rf ~` is two commands and an allow for `ls` says nothing about the second:

- a deny or ask rule matches if it matches *any* part, looking through wrappers (`timeout`,
  `sudo`, `env`, `xargs`, ...) and leading `VAR=value` assignments, so `nice rm -rf x` is
  still `rm -rf x` to `Bash(rm:*)`;
- an allow rule set allows the command only if *every* part is allowed by some rule, and
  only harmless assignments (`LANG=C`) are looked through: `PATH=/tmp/evil ls` is not `ls`.

Command specifiers: `npm run test:*` and `npm run test *` are prefixes that end at a word
boundary (`ls:*` does not match `lsof`); any other `*` matches anything; otherwise the
command must be exactly the specifier (whitespace runs count as one space).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from ..bash import BashAnalysis, SimpleCommand, strip_safe_assignments, unwrap
from .context import PermissionRule, RuleBehavior
from .paths import compile_pattern, pattern_covers
from .targets import CommandTarget, DomainTarget, PathTarget, RuleTarget, rule_family

_SPACES = re.compile(r"\s+")


def squeeze(command: str) -> str:
    return _SPACES.sub(" ", command).strip()


@lru_cache(maxsize=2048)
def _command_matcher(specifier: str) -> re.Pattern[str]:
    spec = squeeze(specifier)
    if spec.endswith(":*"):
        prefix = spec[:-2].rstrip()
        return re.compile(re.escape(prefix) + r"(?: .*)?", re.DOTALL)
    if spec.endswith(" *") and "*" not in spec[:-2]:
        return re.compile(re.escape(spec[:-2]) + r"(?: .*)?", re.DOTALL)
    if spec == "*":
        return re.compile(r".*", re.DOTALL)
    return re.compile(".*".join(re.escape(part) for part in spec.split("*")), re.DOTALL)


def command_matches(specifier: str, command: str) -> bool:
    return _command_matcher(specifier).fullmatch(squeeze(command)) is not None


def domain_matches(specifier: str, host: str) -> bool:
    """`domain:example.com` is that host; `domain:*.example.com` its subdomains."""
    if not specifier.startswith("domain:"):
        return False
    wanted = specifier.removeprefix("domain:").strip().lower().rstrip(".")
    host = host.lower().rstrip(".")
    if wanted.startswith("*."):
        return host.endswith(wanted[1:]) and len(host) > len(wanted) - 1
    return host == wanted


def _deny_forms(command: SimpleCommand) -> set[str]:
    """Every way a deny or ask rule may see one simple command."""
    forms = {command.text}
    if command.argv:
        forms.add(" ".join(command.argv))
        unwrapped = unwrap(command.argv)
        if unwrapped:
            forms.add(" ".join(unwrapped))
    return forms


def bash_rule_hits(
    rules: Iterable[PermissionRule], analysis: BashAnalysis, behavior: RuleBehavior
) -> PermissionRule | None:
    """For deny and ask: the first rule matching any part of the command."""
    if behavior == "allow":
        raise ValueError("allow rules need every part: use bash_allowed_by")
    specified = [r for r in rules if r.content is not None]
    if not specified:
        return None
    forms = {analysis.command}
    for command in analysis.commands:
        forms |= _deny_forms(command)
    for rule in specified:
        assert rule.content is not None
        if any(command_matches(rule.content, form) for form in forms):
            return rule
    return None


def bash_allowed_by(
    rules: Iterable[PermissionRule], analysis: BashAnalysis
) -> tuple[PermissionRule, ...] | None:
    """The allow rules covering every part of the command, or None if some part is not."""
    specified = [r for r in rules if r.content is not None]
    if not specified or not analysis.ok or not analysis.commands:
        return None
    used: list[PermissionRule] = []
    for command in analysis.commands:
        text = strip_safe_assignments(command)
        if text is None:
            return None
        rule = next((r for r in specified if command_matches(r.content or "", text)), None)
        if rule is None:
            return None
        if rule not in used:
            used.append(rule)
    return tuple(used)


def rule_base(rule: PermissionRule, cwd: Path) -> Path:
    """Where a rule's `/p` starts: the project for project files, else the file's directory."""
    if rule.path is None:
        return cwd
    folder = rule.path.parent
    if folder.name in (".proctor", ".claude"):
        return folder.parent
    return folder


def path_rule_covers(rule: PermissionRule, path: Path, cwd: Path, behavior: RuleBehavior) -> bool:
    assert rule.content is not None
    pattern = compile_pattern(rule.content, behavior, cwd=cwd, base=rule_base(rule, cwd))
    return pattern_covers(pattern, path, cwd, behavior)


def specifier_applies(rule: PermissionRule, tool_name: str, target: RuleTarget | None) -> bool:
    """Whether this rule's specifier speaks about this kind of call at all."""
    family = rule_family(rule.tool_name)
    if family is not None:
        return isinstance(target, PathTarget) and target.access == family
    if isinstance(target, CommandTarget | DomainTarget):
        return rule.tool_name == tool_name
    return False


def target_matches(
    rule: PermissionRule,
    target: RuleTarget,
    cwd: Path,
    behavior: RuleBehavior,
) -> bool:
    """A path or domain specifier against the call's target (commands go part by part)."""
    assert rule.content is not None
    if isinstance(target, PathTarget):
        return path_rule_covers(rule, target.path, cwd, behavior)
    if isinstance(target, DomainTarget):
        return domain_matches(rule.content, target.host)
    return command_matches(rule.content, target.command)
