"""Skills: found where people keep them, announced by name, loaded whole when called, and
their allowed-tools narrowing what may run until the turn ends (never granting anything)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import make_services

from core.access.context import SkillScope, ToolPermissionContext
from core.access.decision import Allow, Ask, Deny
from core.access.rules import parse_rule
from core.agent.demo import DEMO_MODEL, SAMPLE_PROJECT_DIR, DemoModel, copy_sample_project
from core.agent.loop import AgentLoop
from core.agent.model import ModelClient, RetryPolicy
from core.agent.prompt import tool_definitions
from core.agent.scenario import parse_scenario
from core.agent.skills import session_skills
from core.app_state import AppState, AppStateStore
from core.events import EventRecorder, ToolCompleted
from core.hooks import PreToolUseOutcome
from core.permissions.decide import DecisionChain
from core.registry import assemble_tool_pool
from core.session_services import SessionServices
from core.tool import AnyTool, ToolContext, ToolOptions
from core.tools.skill import SKILLS, Skill, SkillLoaded
from core.tools.skill_files import SkillCatalog

BYPASS = ToolPermissionContext(mode="bypassPermissions", bypass_available=True)
NO_HOOK = PreToolUseOutcome()


def write_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def skill_text(name: str, description: str, body: str = "Do it.", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """proctor's config, the user's Claude folder and a project, each with a skills folder."""
    places = {
        "proctor": tmp_path / "proctor-config",
        "claude": tmp_path / "claude-home",
        "project": tmp_path / "project",
    }
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(places["proctor"]))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(places["claude"]))
    places["project"].mkdir()
    return {
        "proctor": places["proctor"] / "skills",
        "claude": places["claude"] / "skills",
        "project": places["project"] / ".claude" / "skills",
        "cwd": places["project"],
    }


# -- discovery and announcement --------------------------------------------------------------


def test_skills_are_found_in_all_three_places_and_announced_by_name(
    homes: dict[str, Path],
) -> None:
    write_skill(homes["project"], "deploy", skill_text("deploy", "Ship the site."))
    write_skill(homes["claude"], "review", skill_text("review", "Review a diff."))
    write_skill(homes["proctor"], "notes", skill_text("notes", "Write release notes."))
    write_skill(
        homes["project"],
        "hidden",
        skill_text("hidden", "Only for people.", extra="disable-model-invocation: true\n"),
    )
    catalog = session_skills(homes["cwd"])
    assert catalog.problems == ()
    sources = {s.name: s.source for s in catalog.skills}
    assert sources == {
        "deploy": "project",
        "review": "claude-user",
        "notes": "user",
        "hidden": "project",
    }

    services = SessionServices()
    services.provide(SKILLS, catalog)
    options = ToolOptions(tools=assemble_tool_pool(ToolPermissionContext()), services=services)
    sent = {t["name"]: t["description"] for t in tool_definitions(options)}
    listed = sent["Skill"]
    # Announced by name and description, sorted; bodies are not sent until a call loads them.
    assert listed.index("- deploy: Ship the site.") < listed.index("- notes: Write release")
    assert "- review: Review a diff." in listed
    assert "hidden" not in listed and "Do it." not in listed


def test_the_persons_skill_keeps_its_name_and_the_projects_copy_is_reported(
    homes: dict[str, Path],
) -> None:
    write_skill(homes["claude"], "review", skill_text("review", "Mine."))
    theirs = write_skill(homes["project"], "review", skill_text("review", "The repo's."))
    catalog = session_skills(homes["cwd"])
    assert [s.description for s in catalog.skills] == ["Mine."]
    assert [str(p) for p in catalog.problems] == [
        f"{theirs}:1: skill not loaded: 'review' is already the skill in "
        f"{homes['claude'] / 'review' / 'SKILL.md'}"
    ]


def test_a_skill_without_front_matter_is_named_by_its_folder(homes: dict[str, Path]) -> None:
    write_skill(homes["project"], "lint", "# Lint\n\nRun the linters before committing.\n")
    (skill,) = session_skills(homes["cwd"]).skills
    assert (skill.name, skill.description) == ("lint", "Run the linters before committing.")


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("---\nname: x\ndescription: y\n", 1, "never closed"),
        ("---\nname: x\ndescription: y\njust words\n---\nbody\n", 4, "expected `key: value`"),
        ("---\nname: Bad Name\ndescription: y\n---\n", 2, "lowercase letters"),
        ("---\nname: x\ndescription: 'y\n---\n", 3, "quote opened"),
        ("---\nname: x\n---\n\n", 1, "no `description`"),
        ("---\nname: x\ndescription: y\nallowed-tools: Read, Bash(ls\n---\n", 4, "allowed-tools"),
        ("---\nname: x\ndescription: y\nname: z\n---\n", 4, "given twice (also on line 2)"),
        ("---\nname: x\ndescription: y\ndisable-model-invocation: maybe\n---\n", 4, "true or"),
    ],
)
def test_front_matter_errors_name_the_file_and_line(
    homes: dict[str, Path], text: str, line: int, words: str
) -> None:
    path = write_skill(homes["project"], "x", text)
    catalog = session_skills(homes["cwd"])
    assert catalog.skills == ()
    (problem,) = catalog.problems
    assert (problem.path, problem.line) == (path, line)
    assert str(problem).startswith(f"{path}:{line}: skill not loaded: ")
    assert words in problem.message


def test_unknown_and_unsupported_keys_are_warned_about_and_the_skill_still_loads(
    homes: dict[str, Path],
) -> None:
    path = write_skill(
        homes["project"],
        "x",
        "---\nname: x\ndescription: >\n  Folded over\n  two lines.\ncolour: blue\n"
        "effort: high\nallowed-tools:\n  - Read\n  - Bash(git diff:*)\ncontext: fork\n---\nBody.\n",
    )
    catalog = session_skills(homes["cwd"])
    (skill,) = catalog.skills
    assert skill.description == "Folded over two lines."
    assert [str(rule) for rule in skill.allowed_tools or ()] == ["Read", "Bash(git diff:*)"]
    assert [(p.line, p.severity) for p in catalog.problems] == [
        (6, "warning"),
        (7, "warning"),
        (11, "warning"),
    ]
    assert "unknown key `colour`" in str(catalog.problems[0])
    assert "`effort` is not supported by proctor yet" in str(catalog.problems[1])
    assert "`context` is not supported by proctor yet" in str(catalog.problems[2])
    assert str(path) in str(catalog.problems[1])


def test_the_sample_projects_skill_is_read_as_written() -> None:
    (skill,) = session_skills(SAMPLE_PROJECT_DIR).skills
    assert skill.name == "run-tests"
    assert "Bash(python -m unittest:*)" in [str(r) for r in skill.allowed_tools or ()]
    assert (SAMPLE_PROJECT_DIR / "tests" / "test_counts.py").is_file()  # what its body names


# -- the permission chain --------------------------------------------------------------------


def context_for(cwd: Path, permissions: ToolPermissionContext) -> ToolContext:
    return ToolContext(cwd=cwd, app_state=AppStateStore(AppState(permission_context=permissions)))


async def decide(tool_name: str, raw: dict[str, Any], context: ToolContext) -> Any:
    pool = assemble_tool_pool(context.permission_context)
    tool: AnyTool | None = pool.find(tool_name)
    assert tool is not None
    return await DecisionChain().decide(tool, tool.parse_input(raw), context, NO_HOOK)


def scoped(mode: str, *allowed: str, rules: tuple[str, ...] = ()) -> ToolPermissionContext:
    scope = SkillScope("run-tests", tuple(parse_rule(a, "allow") for a in allowed))
    return ToolPermissionContext(
        mode=mode,  # type: ignore[arg-type]
        bypass_available=True,
        skill_scopes=(scope,),
        rules=tuple(parse_rule(r, "allow") for r in rules),
    )


async def test_a_call_outside_allowed_tools_is_refused_even_when_bypassing(
    tmp_path: Path,
) -> None:
    context = context_for(tmp_path, scoped("bypassPermissions", "Read", "Bash(git status:*)"))
    refused = await decide("Bash", {"command": "touch made"}, context)
    assert isinstance(refused, Deny)
    assert refused.decided_by.kind == "skill"
    assert "the skill 'run-tests' is active" in refused.message
    assert "Read, Bash(git status:*)" in refused.message
    assert refused.message.endswith("end your turn: the skill's limits end with the turn.")
    assert refused.decided_by.detail == "the allowed-tools of the skill 'run-tests'"
    # A compound command fits only when every part is covered.
    mixed = await decide("Bash", {"command": "git status && touch made"}, context)
    assert isinstance(mixed, Deny)
    assert isinstance(await decide("Bash", {"command": "git status"}, context), Allow)
    assert isinstance(await decide("Read", {"file_path": str(tmp_path / "a")}, context), Allow)
    # Another skill may still be loaded: it can only narrow further.
    assert not isinstance(await decide("Skill", {"skill": "other"}, context), Deny)


async def test_allowed_tools_never_grant_what_the_person_did_not(tmp_path: Path) -> None:
    context = context_for(tmp_path, scoped("default", "Bash(touch:*)", "Write"))
    asked = await decide("Bash", {"command": "touch made"}, context)
    assert isinstance(asked, Ask)  # listed by the skill, still the person's to answer
    write = {"file_path": str(tmp_path / "x"), "content": "x"}
    assert isinstance(await decide("Write", write, context), Ask)
    plan = context_for(tmp_path, scoped("plan", "Bash(touch:*)"))
    assert isinstance(await decide("Bash", {"command": "touch made"}, plan), Deny)


async def test_the_skill_tool_asks_like_a_call_that_changes_things(tmp_path: Path) -> None:
    ask = await decide("Skill", {"skill": "x"}, context_for(tmp_path, ToolPermissionContext()))
    assert isinstance(ask, Ask)
    assert ask.message == "Skill would load 'x', and no rule allows it."
    assert ask.suggestions == ("Skill(x)",)
    for rule, decided in [
        ("Skill", Allow),
        ("Skill(x)", Allow),
        ("Skill(/x)", Ask),  # rules name skills as they are, not as slash commands
        ("Skill(other)", Ask),
    ]:
        allowed = ToolPermissionContext(rules=(parse_rule(rule, "allow"),))
        got = await decide("Skill", {"skill": "/x"}, context_for(tmp_path, allowed))
        assert isinstance(got, decided), rule
    prefix = ToolPermissionContext(rules=(parse_rule("Skill(release:*)", "allow"),))
    got = await decide("Skill", {"skill": "release-notes"}, context_for(tmp_path, prefix))
    assert isinstance(got, Allow)
    for other in ("review", "releasing"):  # the prefix is the whole word before `:*`
        got = await decide("Skill", {"skill": other}, context_for(tmp_path, prefix))
        assert isinstance(got, Ask), other
    denied = ToolPermissionContext(
        mode="bypassPermissions", bypass_available=True, rules=(parse_rule("Skill(x)", "deny"),)
    )
    assert isinstance(await decide("Skill", {"skill": "x"}, context_for(tmp_path, denied)), Deny)
    plan = ToolPermissionContext(mode="plan")
    assert isinstance(await decide("Skill", {"skill": "x"}, context_for(tmp_path, plan)), Deny)


# -- end to end through the loop -------------------------------------------------------------


def loop_for(tmp_path: Path, *turns: Any) -> tuple[AgentLoop, EventRecorder, Path]:
    scenario = parse_scenario(json.dumps({"name": "t", "turns": list(turns)}))
    workspace = copy_sample_project(tmp_path / "workspace")
    demo = DemoModel(scenario, workspace=workspace, speed=0)
    services = SessionServices()
    services.provide(SKILLS, session_skills(workspace))
    context = ToolContext(
        cwd=workspace,
        app_state=AppStateStore(AppState(permission_context=BYPASS)),
        options=ToolOptions(tools=assemble_tool_pool(BYPASS), model=DEMO_MODEL, services=services),
    )
    recorder = EventRecorder()
    loop = AgentLoop(
        ModelClient(demo.client(max_retries=0), model=DEMO_MODEL),
        make_services(recorder, session_dir=tmp_path / "session"),
        context,
        retry=RetryPolicy(max_attempts=1, base_delay_s=0),
    )
    return loop, recorder, workspace


def use(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": tool_input}


def said(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def results(recorder: EventRecorder) -> dict[str, ToolCompleted]:
    return {e.tool_use_id: e for e in recorder.events if isinstance(e, ToolCompleted)}


def result_texts(loop: AgentLoop) -> list[str]:
    texts = []
    for message in loop.messages:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                texts.append(content if isinstance(content, str) else json.dumps(content))
    return texts


async def test_a_loaded_skill_narrows_its_turn_and_the_next_turn_is_free_again(
    tmp_path: Path,
) -> None:
    loop, _, workspace = loop_for(
        tmp_path,
        [use("Skill", skill="run-tests")],
        [
            use("Bash", command="touch {workspace}/during"),
            use("Read", file_path="{workspace}/README.md"),
        ],
        [said("The skill is done.")],
        [use("Bash", command="touch {workspace}/after")],
        [said("Done.")],
    )
    ended = await loop.send("run the tests")
    assert ended.stop_reason == "end_turn"
    loaded, refused, read = result_texts(loop)
    assert "Base directory for this skill: " + str(workspace / ".claude/skills/run-tests") in loaded
    assert "python -m unittest tests.test_counts" in loaded  # the body, loaded in full
    assert "Bash was not run: the skill 'run-tests' is active" in refused
    assert not (workspace / "during").exists()
    assert "textstats" in read
    assert loop.context.permission_context.skill_scopes == ()

    await loop.send("now make a file")
    assert (workspace / "after").exists()  # the same call runs once the skill's turn ended


async def test_an_unknown_skill_is_a_clear_error_naming_the_ones_there_are(
    tmp_path: Path,
) -> None:
    loop, _, _ = loop_for(
        tmp_path, [use("Skill", skill="deploy")], [use("Skill", skill="/run-tests")], [said("ok")]
    )
    await loop.send("deploy")
    unknown, known = result_texts(loop)
    assert unknown == (
        "<tool_use_error>There is no skill 'deploy' in this session. "
        "Available skills: run-tests.</tool_use_error>"
    )
    assert '<skill name="run-tests">' in known  # written as a slash command, still found


async def test_a_skill_changed_into_a_broken_file_says_so_when_called(tmp_path: Path) -> None:
    loop, _, workspace = loop_for(tmp_path, [use("Skill", skill="run-tests")], [said("ok")])
    path = workspace / ".claude/skills/run-tests/SKILL.md"
    announced = tool_definitions(loop.context.options)
    path.write_text("---\nname: run-tests\n")
    await loop.send("go")
    (text,) = result_texts(loop)
    assert "could not be loaded" in text and f"{path}:1" in text
    # What the model was told stays as it was: the cached prefix does not move mid-session.
    assert tool_definitions(loop.context.options) == announced
    assert loop.context.permission_context.skill_scopes == ()


def test_an_empty_catalog_says_there_are_none() -> None:
    prompt = Skill().prompt(ToolOptions())
    assert prompt.endswith("(none in this session)")
    assert SkillCatalog().find("x") is None


def test_a_byte_order_mark_and_windows_line_ends_do_not_hide_the_front_matter(
    homes: dict[str, Path],
) -> None:
    path = homes["project"] / "crlf" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xef\xbb\xbf---\r\nname: crlf\r\ndescription: Made on Windows.\r\n---\r\nx")
    (skill,) = session_skills(homes["cwd"]).skills
    assert (skill.name, skill.description) == ("crlf", "Made on Windows.")


async def test_an_empty_allowed_tools_leaves_only_loading_skills(tmp_path: Path) -> None:
    context = context_for(tmp_path, scoped("bypassPermissions"))
    read = await decide("Read", {"file_path": str(tmp_path / "a")}, context)
    assert isinstance(read, Deny) and "(no tools)" in read.message


# -- arguments, the keys that say who runs a skill, skills added mid-session ----------------


def test_the_calls_args_fill_arguments_and_numbered_placeholders(homes: dict[str, Path]) -> None:
    write_skill(
        homes["project"],
        "fix",
        skill_text("fix", "Fix an issue.", body="Fix issue $1 at priority $2.\nAll: $ARGUMENTS"),
    )
    (skill,) = session_skills(homes["cwd"]).skills
    text = Skill().render(SkillLoaded(skill, '42 high "by friday"'))
    assert 'Fix issue 42 at priority high.\nAll: 42 high "by friday"' in text
    assert "$1" not in text and "$ARGUMENTS" not in text
    # No placeholder in the body: the arguments are added after it, never lost.
    write_skill(homes["project"], "plain", skill_text("plain", "Plain.", body="Just do it."))
    plain = session_skills(homes["cwd"]).find("plain")
    assert plain is not None
    assert "Just do it.\n\nARGUMENTS: only the docs" in Skill().render(
        SkillLoaded(plain, "only the docs")
    )
    # No args at all: numbered placeholders are empty, the body otherwise as written.
    assert "Fix issue  at priority ." in Skill().render(SkillLoaded(skill, None))


def test_who_may_run_a_skill_is_read_from_its_front_matter(homes: dict[str, Path]) -> None:
    write_skill(
        homes["project"],
        "deploy",
        skill_text(
            "deploy",
            "Ship it.",
            extra="disable-model-invocation: true\nargument-hint: [environment]\nmodel: opus\n",
        ),
    )
    write_skill(
        homes["project"],
        "style",
        skill_text("style", "House style.", extra="user-invocable: false\n"),
    )
    catalog = session_skills(homes["cwd"])
    assert catalog.problems == ()  # every key here is one proctor acts on
    deploy, style = catalog.find("deploy"), catalog.find("style")
    assert deploy is not None and style is not None
    assert (deploy.model_invocable, deploy.user_invocable) == (False, True)
    assert (deploy.argument_hint, deploy.model) == ("[environment]", "opus")
    assert (style.model_invocable, style.user_invocable) == (True, False)
    assert [s.name for s in catalog.announced()] == ["style"]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ("disable-model-invocation: true\nuser-invocable: false\n", "leave no one to run it"),
        ("model: haiku\n", "is used when you run /x; when the model loads the skill"),
        ("user-invocable: false\nmodel: haiku\n", "`model: haiku` is never used"),
    ],
)
def test_keys_that_cannot_all_apply_are_said_once_and_the_skill_stays(
    homes: dict[str, Path], extra: str, words: str
) -> None:
    write_skill(homes["project"], "x", skill_text("x", "X.", extra=extra))
    catalog = session_skills(homes["cwd"])
    assert [s.name for s in catalog.skills] == ["x"]
    (problem,) = catalog.problems
    assert problem.severity == "warning" and words in problem.message


def test_user_invocable_must_be_true_or_false(homes: dict[str, Path]) -> None:
    path = write_skill(homes["project"], "x", skill_text("x", "X.", extra="user-invocable: no\n"))
    catalog = session_skills(homes["cwd"])
    assert catalog.skills == ()
    (problem,) = catalog.problems
    assert (problem.path, problem.line) == (path, 4)
    assert "`user-invocable` must be true or false" in problem.message


async def test_a_skill_added_mid_session_loads_when_called_and_the_prefix_stays(
    tmp_path: Path,
) -> None:
    loop, _, workspace = loop_for(
        tmp_path, [use("Skill", skill="release", args="v2.1")], [said("ok")]
    )
    announced = tool_definitions(loop.context.options)
    assert "- release:" not in json.dumps(announced)
    write_skill(
        workspace / ".claude" / "skills",
        "release",
        skill_text("release", "Cut a release.", body="Tag $1 and write its notes."),
    )
    await loop.send("use the release skill I just added for v2.1")
    (loaded,) = result_texts(loop)
    assert '<skill name="release">' in loaded and "Tag v2.1 and write its notes." in loaded
    # Not listed until the next session: the cached prefix is what it was.
    assert tool_definitions(loop.context.options) == announced


def test_a_rescan_keeps_out_an_untrusted_projects_skills(homes: dict[str, Path]) -> None:
    catalog = session_skills(homes["cwd"], project=False)
    write_skill(homes["project"], "sneaky", skill_text("sneaky", "From the clone."))
    write_skill(homes["claude"], "mine", skill_text("mine", "Added by me."))
    again = catalog.rescanned()
    assert again.find("sneaky") is None
    assert again.find("mine") is not None


def test_a_persons_slash_skill_fills_only_its_instructions(homes: dict[str, Path]) -> None:
    from core.agent.commands import CommandRegistry, SendPrompt, resolve
    from core.agent.skills import skill_commands

    write_skill(
        homes["project"],
        "echo",
        skill_text(
            "echo",
            "Echo things.",
            body="Say $1 twice.",
            extra="allowed-tools: Bash(echo $1:*)\nargument-hint: <word>\nmodel: claude-x\n",
        ),
    )
    write_skill(homes["project"], "quiet", skill_text("q", "Q.", extra="user-invocable: false\n"))
    made, notes = skill_commands(session_skills(homes["cwd"]))
    assert [c.name for c in made] == ["echo"] and notes == []
    assert made[0].argument_hint == "<word>" and made[0].label == "project skill"
    resolved = resolve("/echo hello", CommandRegistry(made))
    assert isinstance(resolved, SendPrompt)
    prompt = str(resolved.prompt)
    assert "Say hello twice." in prompt
    assert "only these tools may run: Bash(echo $1:*)" in prompt  # the rule as written
    assert resolved.prompt.model == "claude-x"  # its turn's model, as a command's
    assert resolved.prompt.narrowing is not None
    assert [str(r) for r in resolved.prompt.narrowing.rules] == ["Bash(echo $1:*)"]
    # The same text the Skill tool gives the model, arguments and all.
    (echo,) = [s for s in session_skills(homes["cwd"]).skills if s.name == "echo"]
    assert prompt == Skill().render(SkillLoaded(echo, "hello"))


async def test_a_refusal_names_the_skill_file_that_listed_the_tools(tmp_path: Path) -> None:
    skill_file = tmp_path / ".claude" / "skills" / "run-tests" / "SKILL.md"
    scope = SkillScope("run-tests", (parse_rule("Read", "allow"),), path=skill_file)
    context = context_for(tmp_path, ToolPermissionContext(skill_scopes=(scope,)))
    refused = await decide("Bash", {"command": "touch made"}, context)
    assert isinstance(refused, Deny)
    assert (
        refused.decided_by.detail == f"the allowed-tools of the skill 'run-tests' in {skill_file}"
    )


# -- a project's skill cannot bring in other files on this machine ---------------------------


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_a_project_skill_that_links_out_of_the_project_is_not_offered(
    homes: dict[str, Path], tmp_path: Path, linked: str
) -> None:
    """A cloned SKILL.md that is a link to ~/.aws/credentials (or a skill folder linked to
    ~/.ssh) would put that file's first paragraph in the Skill tool's description, sent with
    every request, and its text in the conversation once loaded: nobody asked to read it."""
    secret = tmp_path / "home" / "creds" / "SKILL.md"
    secret.parent.mkdir(parents=True)
    secret.write_text("aws_secret_access_key = SECRET-TOKEN\n")
    homes["project"].mkdir(parents=True)
    if linked == "file":
        (homes["project"] / "creds").mkdir()
        (homes["project"] / "creds" / "SKILL.md").symlink_to(secret)
    else:
        (homes["project"] / "creds").symlink_to(secret.parent)
    write_skill(homes["project"], "deploy", skill_text("deploy", "Ship the site."))
    catalog = session_skills(homes["cwd"])
    assert [s.name for s in catalog.skills] == ["deploy"]
    (problem,) = catalog.problems
    assert "outside the project" in str(problem) and "SECRET" not in str(problem)
    # Nor when the model asks for it by name, as for a skill added since the session began.
    assert catalog.rescanned().find("creds") is None


def test_a_users_own_skill_may_be_a_link(homes: dict[str, Path], tmp_path: Path) -> None:
    kept = tmp_path / "dotfiles" / "notes" / "SKILL.md"
    kept.parent.mkdir(parents=True)
    kept.write_text(skill_text("notes", "Write release notes."))
    homes["claude"].mkdir(parents=True)
    (homes["claude"] / "notes").symlink_to(kept.parent)
    assert [s.name for s in session_skills(homes["cwd"]).skills] == ["notes"]


def test_a_huge_skill_file_is_reported_not_read(homes: dict[str, Path]) -> None:
    from core.tools.skill_files import MAX_SKILL_BYTES

    write_skill(homes["project"], "big", skill_text("big", "Huge.", "x" * MAX_SKILL_BYTES))
    catalog = session_skills(homes["cwd"])
    assert catalog.skills == ()
    assert "larger than 256 KB" in str(catalog.problems[0])
