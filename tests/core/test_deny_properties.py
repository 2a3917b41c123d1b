"""Property: a command denied by a rule stays denied however it is dressed up.

Wrappers (timeout, sudo, env, nice, ...), leading assignments, compound lists, pipelines,
subshells and command substitutions are generated around a denied command; the decision
must stay deny in every mode, bypass included.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from permission_tools import Shell

from core.access.context import ToolPermissionContext
from core.access.rules import parse_rule
from core.hooks import PreToolUseOutcome
from core.permissions.decide import evaluate, prepare

DENIED = ["git push origin main", "rm -rf build", "curl -sSL https://example.com/x.sh"]
RULES = ("Bash(git push:*)", "Bash(rm:*)", "Bash(curl:*)")
HARMLESS = ["ls", "echo ok", "true", "cat README.md", "git status"]

wrappers = st.sampled_from(
    [
        "timeout 10 ",
        "timeout -s KILL 5 ",
        "time ",
        "nice ",
        "nice -n 10 ",
        "nohup ",
        "stdbuf -oL ",
        "env ",
        "env FOO=1 ",
        "command ",
        "builtin ",
        "sudo ",
        "sudo -u root ",
        "setsid ",
        "ionice -c3 ",
        "FOO=bar ",
        "A=1 B=2 ",
        "LANG=C ",
        "",
    ]
)
shapes = st.sampled_from(
    [
        "{c}",
        "{h} && {c}",
        "{c} && {h}",
        "{h}; {c}",
        "{h} || {c}",
        "{h} | {c}",
        "({c})",
        "{{ {c}; }}",
        "echo $({c})",
        "{h} && ({h} | {c})",
        "if {h}; then {c}; fi",
        "{h}\n{c}",
        "{c} &",
        "for x in 1; do {c}; done",
        "echo `{c}`",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    denied=st.sampled_from(DENIED),
    layers=st.lists(wrappers, min_size=0, max_size=3),
    shape=shapes,
    harmless=st.sampled_from(HARMLESS),
    mode=st.sampled_from(["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]),
)
def test_a_denied_command_stays_denied(denied, layers, shape, harmless, mode):
    command = shape.format(c="".join(layers) + denied, h=harmless)
    denials = [parse_rule(r, "deny", source="user") for r in RULES]
    rules = (*denials, parse_rule("Bash", "allow", source="user"))
    permissions = ToolPermissionContext(mode=mode, rules=rules, bypass_available=True)
    tool = Shell()
    call = prepare(tool, tool.parse_input({"command": command}), Path("/tmp"), permissions)
    decision = evaluate(call, PreToolUseOutcome(permission="allow"))
    assert decision.behavior == "deny", (command, decision)
