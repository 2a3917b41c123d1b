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

import itertools
import os
import re
import shlex
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from ..access.context import PermissionRule, RuleBehavior
from ..access.paths import compile_pattern, pattern_covers
from ..access.targets import (
    CommandTarget,
    DomainTarget,
    NameTarget,
    PathTarget,
    RuleTarget,
    canonical_host,
    rule_family,
)
from ..bash import BashAnalysis, SimpleCommand, strip_safe_assignments, unwrap
from ..bash.git import split_global
from ..bash.readonly import command_problem
from ..bash.runners import Runs, assignments_run, commands_run
from ..bash.wrappers import base_name

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


def name_matches(specifier: str, name: str) -> bool:
    """`release-notes` is that name exactly; `release:*` every name starting `release`."""
    if specifier.endswith(":*"):
        return name.startswith(specifier[:-2])
    return name == specifier


def domain_matches(specifier: str, host: str) -> bool:
    """`domain:example.com` is that host; `domain:*.example.com` its subdomains."""
    if not specifier.startswith("domain:"):
        return False
    wanted = specifier.removeprefix("domain:").strip()
    prefix = "*." if wanted.startswith("*.") else ""
    wanted = prefix + canonical_host(wanted.removeprefix("*."))
    host = canonical_host(host)
    if wanted.startswith("*."):
        return host.endswith(wanted[1:]) and len(host) > len(wanted) - 1
    return host == wanted


def _deny_forms(command: SimpleCommand) -> set[str]:
    """Every way a deny or ask rule may see one simple command: as written, as its words,
    through wrappers, by its program's base name (`/usr/bin/git`), and for git without its
    global options (`git --no-pager -C . log` is `git log`)."""
    forms = {command.text}
    if command.argv:
        for argv in (command.argv, unwrap(command.argv)):
            if argv:
                forms.add(" ".join(argv))
                forms |= _spellings(argv)
    return forms


# git's global options that take a value as the next word (when not given as `--x=value`).
_GIT_VALUED = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env",
     "--exec-path", "--attr-source", "--list-cmds"}
)  # fmt: skip


def _spellings(argv: tuple[str, ...]) -> set[str]:
    """The same command under the names a rule would use for it."""
    name = os.path.basename(argv[0])
    forms = {" ".join((name, *argv[1:]))} if name != argv[0] else set()
    if name == "git":
        forms |= {"git " + rest for rest in _git_subcommands(argv[1:])}
    elif name.startswith("git-") and len(name) > 4:
        # git's own programs (`/usr/lib/git-core/git-push`) are its subcommands.
        forms.add(" ".join(("git", name[4:], *argv[1:])))
    return forms


def _git_subcommands(args: tuple[str, ...], depth: int = 0) -> set[str]:
    """The subcommand and its words after git's global options. An option it does not know
    may or may not take a value, so both readings are given: a deny rule should hit either."""
    for index, word in enumerate(args):
        if not word.startswith("-") or word == "-":
            return {" ".join(args[index:])}
        if word in _GIT_VALUED:
            return _git_subcommands(args[index + 2 :], depth + 1)
        if "=" in word or word in ("-P", "-p", "--no-pager", "--paginate", "--bare") or depth > 8:
            continue
        if word.startswith("--") or len(word) == 2:
            unknown = _git_subcommands(args[index + 2 :], depth + 1)
            return unknown | _git_subcommands(args[index + 1 :], depth + 1)
    return set()


def bash_rule_hits(
    rules: Iterable[PermissionRule], analysis: BashAnalysis, behavior: RuleBehavior
) -> PermissionRule | None:
    """For deny and ask: the first rule matching any part of the command, or a command one
    of its parts surely runs (`bash -c 'git push'`, `git -c alias.p=push p`)."""
    if behavior == "allow":
        raise ValueError("allow rules need every part: use bash_allowed_by")
    specified = [r for r in rules if r.content is not None]
    if not specified:
        return None
    forms = {analysis.command}
    for command in analysis.commands:
        forms |= _deny_forms(command)
        for inner in command_runs(analysis, command).commands:
            if (exact := inner.exact) is not None:
                forms |= {" ".join(exact), *_spellings(exact)}
    for rule in specified:
        assert rule.content is not None
        if any(command_matches(rule.content, form) for form in forms):
            return rule
    return None


def bash_rule_may_hit(
    rules: Iterable[PermissionRule], analysis: BashAnalysis
) -> PermissionRule | None:
    """A deny or ask rule that may name a command some part runs but the analysis cannot
    spell out: words read by xargs or found by `find -exec`, an alias, `eval "$x"`, or the
    rule's words handed to a program that is not known to treat them as data (`chronic git
    push`, `python3 -c 'os.system("git push")'`, `ssh host git push`)."""
    specified = [r for r in rules if r.content is not None]
    if not specified or analysis.read_only:
        return None
    if not analysis.ok:
        return specified[0]  # not parsed as bash will run it: the parts may be anything
    for command in analysis.commands:
        if command.argv:
            for rule in specified:
                if _same_flags(rule, unwrap(command.argv)):
                    return rule
        runs = command_runs(analysis, command)
        if runs.unseen:
            return specified[0]
        for rule in specified:
            wanted = _rule_words(rule)
            for inner in runs.commands:
                if inner.exact is None and _may_begin(wanted, inner.words, inner.open_ended):
                    return rule
            if command.argv and _names_in(wanted, word_tokens(command.argv[1:])):
                return rule
    return None


_NO_RUNS = Runs()


def command_runs(analysis: BashAnalysis, command: SimpleCommand) -> Runs:
    """What one part runs; a part the analysis proved read-only runs nothing."""
    if command.argv is None or analysis.read_only:
        return _NO_RUNS
    if why := assignments_run(command.assignments):
        return Runs(unseen=why)
    if not command_problem(command):
        return _NO_RUNS
    return commands_run(command.argv)


# Short flags and the long ones they stand for, where a rule is likely to name either.
_FLAG_ALIASES = {
    "rm": {"r": "--recursive", "R": "--recursive", "f": "--force", "i": "--interactive"},
    "git push": {"f": "--force", "u": "--set-upstream", "d": "--delete"},
    "git clean": {"f": "--force"},
    "chmod": {"R": "--recursive"},
    "chown": {"R": "--recursive"},
    "cp": {"r": "--recursive", "R": "--recursive", "f": "--force"},
}


def _same_flags(rule: PermissionRule, argv: tuple[str, ...]) -> bool:
    """Whether a rule that names flags (`Bash(rm -rf:*)`) names this command with its flags
    spelt another way: in another order or clustering (`rm -fr`, `rm -r -f x`, `rm x -rf`),
    as their long forms (`--recursive --force`) or abbreviated (`git push --forc`)."""
    wanted = _rule_words(rule)
    head = list(itertools.takewhile(lambda word: not word.startswith("-"), wanted))
    flags = wanted[len(head) :]
    if not head or not flags or not argv or len(argv) < len(head):
        return False
    if os.path.basename(argv[0]) != head[0] or list(argv[1 : len(head)]) != head[1:]:
        return False
    if any(not word.startswith("-") for word in flags):
        return False  # a rule with operands after its flags is matched as written
    aliases = _FLAG_ALIASES.get(" ".join(head), {})
    have = _flag_set(argv[len(head) :], aliases)
    for flag in _flag_set(tuple(flags), aliases):
        if flag in have:
            continue
        if flag.startswith("--") and any(
            len(given) > 3 and flag.startswith(given) for given in have if given.startswith("--")
        ):
            continue  # GNU and git take an unambiguous prefix of a long option
        return False
    return True


def _flag_set(words: tuple[str, ...], aliases: dict[str, str]) -> set[str]:
    found: set[str] = set()
    for word in words:
        if word == "--":
            break
        if word.startswith("--"):
            found.add(word.split("=", 1)[0])
        elif word.startswith("-") and len(word) > 1:
            found |= {aliases.get(letter, f"-{letter}") for letter in word[1:]}
    return found


def _rule_words(rule: PermissionRule) -> tuple[str, ...]:
    """The words a command rule starts with, up to its first wildcard."""
    assert rule.content is not None
    words: list[str] = []
    for word in squeeze(rule.content.removesuffix(":*")).split(" "):
        if "*" in word:
            break
        if not words and _ASSIGNMENT_START.match(word):
            continue
        words.append(word)
    return tuple(words)


def _same_word(wanted: str, word: str, first: bool) -> bool:
    return word == wanted or (first and os.path.basename(word) == wanted)


def _may_begin(wanted: tuple[str, ...], words: tuple[str | None, ...], open_ended: bool) -> bool:
    """Whether words with unknowns (`None`) in them may begin with the rule's words."""
    for index, want in enumerate(wanted):
        if index >= len(words):
            return open_ended
        word = words[index]
        if word is not None and not _same_word(want, word, index == 0):
            return False
    return True


# What separates words in code and strings: a shell's operators and quotes, and the
# brackets, commas and `=` of other languages (`subprocess.run(["git", "push"])`).
_TOKEN_SPLIT = re.compile(r"""[\s'"`;|&(){}\[\],=<>\\@]+""")


def word_tokens(words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(token for word in words for token in _TOKEN_SPLIT.split(word) if token)


def _names_in(wanted: tuple[str, ...], tokens: tuple[str, ...]) -> bool:
    """Whether the rule's words appear in a row among the tokens."""
    if not wanted:
        return True
    last = len(tokens) - len(wanted)
    return any(
        all(_same_word(want, tokens[start + i], i == 0) for i, want in enumerate(wanted))
        for start in range(last + 1)
    )


def bash_allowed_by(
    rules: Iterable[PermissionRule], analysis: BashAnalysis
) -> tuple[PermissionRule, ...] | None:
    """The allow rules covering every part of the command, or None if some part is not."""
    specified = [r for r in rules if r.content is not None]
    if not specified or not analysis.ok or not analysis.commands:
        return None
    used: list[PermissionRule] = []
    for command in analysis.commands:
        rule = allowing_rule(specified, command)
        if rule is None:
            return None
        if rule not in used:
            used.append(rule)
    return tuple(used)


def allowing_rule(rules: Iterable[PermissionRule], command: SimpleCommand) -> PermissionRule | None:
    """The first allow rule covering this one simple command.

    The command is seen as written (harmless assignments like `LANG=C` looked through),
    without its redirections (their targets are checked as writes elsewhere), by its
    program's name when that lives in a system directory, and as `git <subcommand>` when
    git's global options are all safe ones. A rule that itself starts with assignments
    (`PAGER=cat gh:*`) is matched against the command with its assignments."""
    plain = strip_safe_assignments(command)
    forms: list[str] = [plain] if plain is not None else []
    argv = command.argv
    if argv and plain is not None:
        forms.append(shlex.join(argv))
        program = base_name(argv[0])
        if program != argv[0]:
            forms.append(shlex.join((program, *argv[1:])))
        if program == "git":
            problem, sub, rest, _ = split_global(argv[1:])
            if not problem and sub is not None:
                forms.append(shlex.join(("git", sub, *rest)))
    static = not any(c in word for word in command.assignments for c in "$`")
    with_assignments = None
    if argv and command.assignments and static:
        with_assignments = shlex.join((*command.assignments, *argv))
    for rule in rules:
        content = rule.content or ""
        if _ASSIGNMENT_START.match(content):
            if with_assignments is not None and command_matches(content, with_assignments):
                return rule
        elif any(command_matches(content, form) for form in forms):
            return rule
    return None


_ASSIGNMENT_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


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
    if isinstance(target, CommandTarget | DomainTarget | NameTarget):
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
    if isinstance(target, NameTarget):
        return name_matches(rule.content, target.name)
    return command_matches(rule.content, target.command)
