"""The registry: filtering, the cache-stable order of the pool, lookup by name or alias."""

from __future__ import annotations

import itertools

from tools_for_tests import Sleep

from core.access.context import ToolPermissionContext
from core.access.rules import parse_rule
from core.registry import all_base_tools, assemble_tool_pool, get_tools
from core.tool import ToolOptions, ToolPool


def named(*names: str) -> list[Sleep]:
    return [Sleep(name=name) for name in names]


def deny(*rules: str) -> ToolPermissionContext:
    return ToolPermissionContext(rules=tuple(parse_rule(r, "deny") for r in rules))


def test_all_base_tools_lists_tool_instances_with_unique_names():
    tools = all_base_tools()
    assert len({t.name for t in tools}) == len(tools)


def test_a_blanket_deny_rule_hides_the_tool_but_a_specific_one_does_not():
    tools = named("Bash", "Read", "Edit")
    visible = get_tools(deny("Bash"), tools)
    assert [t.name for t in visible] == ["Read", "Edit"]
    visible = get_tools(deny("Bash(rm:*)"), tools)
    assert [t.name for t in visible] == ["Bash", "Read", "Edit"]


def test_disabled_tools_and_tools_whose_check_raises_are_dropped():
    class Off(Sleep):
        def is_enabled(self):
            return False

    class Broken(Sleep):
        def is_enabled(self):
            raise RuntimeError("no config")

    tools = [Sleep(name="On"), Off(name="Off"), Broken(name="Broken")]
    assert [t.name for t in get_tools(ToolPermissionContext(), tools)] == ["On"]


def test_simple_mode_keeps_only_bash_read_and_edit(monkeypatch):
    tools = named("Bash", "Read", "Edit", "Grep", "Write")
    monkeypatch.setenv("PROCTOR_SIMPLE", "1")
    assert sorted(t.name for t in get_tools(ToolPermissionContext(), tools)) == [
        "Bash",
        "Edit",
        "Read",
    ]
    monkeypatch.setenv("PROCTOR_SIMPLE", "0")
    assert len(get_tools(ToolPermissionContext(), tools)) == 5


def test_pool_is_built_ins_sorted_then_mcp_sorted_whatever_the_input_order():
    built_in = named("Write", "Bash", "Read")
    mcp = named("mcp__zeta__run", "mcp__alpha__fetch")
    orders = set()
    for b, m in itertools.product(itertools.permutations(built_in), itertools.permutations(mcp)):
        orders.add(assemble_tool_pool(ToolPermissionContext(), m, base_tools=b).names)
    assert orders == {("Bash", "Read", "Write", "mcp__alpha__fetch", "mcp__zeta__run")}


def test_adding_an_mcp_tool_never_changes_the_built_in_prefix():
    built_in = named("Bash", "Read", "Zed")
    before = assemble_tool_pool(ToolPermissionContext(), named("mcp__b__x"), base_tools=built_in)
    after = assemble_tool_pool(
        ToolPermissionContext(), named("mcp__b__x", "mcp__a__y", "Aardvark"), base_tools=built_in
    )
    assert after.names[:3] == before.names[:3] == ("Bash", "Read", "Zed")


def test_a_built_in_wins_over_an_mcp_tool_of_the_same_name():
    built_in = Sleep(name="Read")
    impostor = Sleep(name="Read")
    pool = assemble_tool_pool(ToolPermissionContext(), [impostor], base_tools=[built_in])
    assert len(pool) == 1 and pool.find("Read") is built_in


def test_mcp_server_rules_hide_every_tool_of_the_server():
    mcp = named("mcp__github__issue", "mcp__github__pr", "mcp__slack__post")
    for rule in ("mcp__github", "mcp__github__*"):
        pool = assemble_tool_pool(deny(rule), mcp, base_tools=[])
        assert pool.names == ("mcp__slack__post",)
    pool = assemble_tool_pool(deny("mcp__github__pr"), mcp, base_tools=[])
    assert pool.names == ("mcp__github__issue", "mcp__slack__post")


def test_lookup_by_name_or_alias_and_names_beat_aliases():
    class Old(Sleep):
        aliases = ("Legacy", "Bash")

    old = Old(name="Modern")
    bash = Sleep(name="Bash")
    pool = ToolPool([old, bash])
    assert pool.find("Modern") is old
    assert pool.find("Legacy") is old
    assert pool.find("Bash") is bash
    assert pool.find("Missing") is None


def test_deferred_tools_are_listed_unless_they_always_load():
    class Deferred(Sleep):
        should_defer = True

    class Pinned(Deferred):
        always_load = True

    pool = ToolPool([Deferred(name="D"), Pinned(name="P"), Sleep(name="S")])
    assert [t.name for t in pool.deferred()] == ["D"]


def test_the_built_in_tools_are_all_there_with_schemas_the_model_can_read(monkeypatch):
    monkeypatch.delenv("PROCTOR_SIMPLE", raising=False)
    pool = assemble_tool_pool(ToolPermissionContext())
    assert pool.names == (
        "AskUserQuestion",
        "Bash",
        "Edit",
        "EnterPlanMode",
        "ExitPlanMode",
        "Glob",
        "Grep",
        "KillShell",
        "NotebookEdit",
        "Read",
        "Skill",
        "Task",
        "TaskOutput",
        "TodoWrite",
        "ToolSearch",
        "WebFetch",
        "Write",
    )
    for tool in pool:
        schema = tool.input_json_schema()
        assert schema["type"] == "object", tool.name
        assert tool.prompt(ToolOptions()).strip(), tool.name
        assert tool.description, tool.name
    monkeypatch.setenv("PROCTOR_SIMPLE", "1")
    assert assemble_tool_pool(ToolPermissionContext()).names == ("Bash", "Edit", "Read")


def test_a_pool_is_wrapped_not_edited():
    base = ToolPool(named("Bash", "Read"))
    remote = named("mcp__gh__issue", "Read")
    bigger = base.extended(remote)
    assert bigger.names == ("Bash", "Read", "mcp__gh__issue")
    assert bigger.find("Read") is base.find("Read")  # its own tool wins a name clash
    assert base.names == ("Bash", "Read")  # the pool it wraps is unchanged
    assert bigger.filtered(lambda tool: tool.name != "Bash").names == ("Read", "mcp__gh__issue")
