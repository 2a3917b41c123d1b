"""Themes as a user meets them: the built-ins, their own files, broken files, `--theme`.

Colours are checked where they end up, in a real app's computed styles, so a variable that
does not flow from the theme file through Textual into the CSS fails here.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.color import Color
from textual.theme import Theme
from textual.widgets import Static

from themes import DIRECTORY, THEME_FILES
from tui.theme_vars import THEME_VARIABLE_DEFAULTS
from tui.theming import (
    DEFAULT_THEME,
    KNOWN_KEYS,
    ThemeError,
    ThemeVariablesMixin,
    install_themes,
    load_theme_file,
    load_themes,
    user_themes_dir,
)

BUILTINS = ("proctor-dark", "proctor-light", "proctor-high-contrast")
STATE_COLOURS = [
    key for key in THEME_VARIABLE_DEFAULTS if key.split("-")[0] in ("tool", "mode", "risk", "diff")
]


@pytest.fixture(autouse=True)
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets an empty config directory, never the developer's own themes."""
    directory = tmp_path / "config"
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(directory))
    return directory


def write_theme(config_dir: Path, filename: str, text: str) -> Path:
    directory = config_dir / "themes"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / filename
    path.write_text(text, encoding="utf-8")
    return path


class Swatches(ThemeVariablesMixin, App[None]):
    """The smallest app that styles widgets with proctor's theme variables."""

    CSS = """
    #running { color: $tool-running; }
    #plan { color: $mode-plan; }
    #failed { color: $tool-failed; background: $tool-failed 20%; }
    """

    def __init__(self, theme: str | None = None) -> None:
        super().__init__()
        self.problems = install_themes(self, theme)

    def compose(self) -> ComposeResult:
        yield Static("running", id="running")
        yield Static("plan", id="plan")
        yield Static("failed", id="failed")

    def colour_of(self, widget_id: str) -> Color:
        return self.query_one(f"#{widget_id}", Static).styles.color


def builtin(name: str) -> Theme:
    return load_theme_file(DIRECTORY / f"{name}.toml")


# --- the built-ins -------------------------------------------------------------------------


def test_the_three_builtins_ship_as_data_and_load_without_problems() -> None:
    assert {path.stem for path in THEME_FILES} >= set(BUILTINS)
    themes, problems = load_themes()
    assert problems == []
    assert [theme.name for theme in themes if theme.name in BUILTINS] == sorted(BUILTINS)
    package_data = tomllib.loads(Path("pyproject.toml").read_text())["tool"]["setuptools"]
    assert "*.toml" in package_data["package-data"]["themes"]


@pytest.mark.parametrize("name", BUILTINS)
def test_each_builtin_defines_every_proctor_variable_as_a_colour(name: str) -> None:
    theme = builtin(name)
    assert theme.name == name
    assert set(THEME_VARIABLE_DEFAULTS) <= set(theme.variables)
    for key in THEME_VARIABLE_DEFAULTS:
        Color.parse(theme.variables[key])


def test_a_theme_file_may_use_every_field_textual_themes_have_and_no_other() -> None:
    assert {field.name for field in dataclasses.fields(Theme)} == KNOWN_KEYS


@pytest.mark.parametrize("name", BUILTINS)
async def test_each_builtin_applies_its_state_colours_to_the_app(name: str) -> None:
    app = Swatches(theme=name)
    async with app.run_test():
        assert app.problems == []
        assert app.theme == name
        variables = builtin(name).variables
        assert app.colour_of("running") == Color.parse(variables["tool-running"])
        assert app.colour_of("plan") == Color.parse(variables["mode-plan"])
        assert app.colour_of("failed") == Color.parse(variables["tool-failed"])


async def test_switching_theme_recolours_a_failed_tool() -> None:
    app = Swatches()
    async with app.run_test() as pilot:
        assert app.theme == DEFAULT_THEME == "proctor-dark"
        dark = app.colour_of("failed")
        app.theme = "proctor-high-contrast"
        await pilot.pause()
        high_contrast = app.colour_of("failed")
    assert dark == Color.parse(builtin("proctor-dark").variables["tool-failed"])
    assert high_contrast == Color.parse(builtin("proctor-high-contrast").variables["tool-failed"])
    assert dark != high_contrast


async def test_the_command_palette_lists_and_switches_to_proctor_themes() -> None:
    app = Swatches()
    async with app.run_test() as pilot:
        app.action_change_theme()
        await pilot.pause()
        await pilot.press(*"high-contrast")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.theme == "proctor-high-contrast"


async def test_textual_own_themes_still_work_through_the_variable_defaults() -> None:
    app = Swatches(theme="textual-dark")
    async with app.run_test():
        assert app.problems == []
        assert app.colour_of("failed") == Color.parse(THEME_VARIABLE_DEFAULTS["tool-failed"])


# --- the user's themes -----------------------------------------------------------------------


async def test_a_users_theme_from_the_config_directory_is_available(config_dir: Path) -> None:
    write_theme(
        config_dir,
        "sunset.toml",
        'name = "sunset"\nprimary = "#ff8800"\nbackground = "#201010"\n'
        '[variables]\ntool-failed = "#ff4040"\n',
    )
    assert user_themes_dir() == config_dir / "themes"
    app = Swatches(theme="sunset")
    async with app.run_test():
        assert app.problems == []
        assert app.theme == "sunset"
        assert app.colour_of("failed") == Color.parse("#ff4040")
        # What the user left out comes from the defaults.
        assert app.colour_of("plan") == Color.parse(THEME_VARIABLE_DEFAULTS["mode-plan"])
        assert {"sunset", *BUILTINS} <= set(app.available_themes)


def test_a_users_theme_with_a_builtins_name_replaces_it(config_dir: Path) -> None:
    write_theme(config_dir, "mine.toml", 'name = "proctor-dark"\nprimary = "#ff00ff"\n')
    themes, problems = load_themes()
    assert problems == []
    assert [theme.primary for theme in themes if theme.name == "proctor-dark"] == ["#ff00ff"]


def test_two_user_files_with_one_name_keep_the_first_and_report_the_second(
    config_dir: Path,
) -> None:
    write_theme(config_dir, "a.toml", 'name = "twin"\nprimary = "#111111"\n')
    second = write_theme(config_dir, "b.toml", 'name = "twin"\nprimary = "#222222"\n')
    themes, problems = load_themes()
    assert [theme.primary for theme in themes if theme.name == "twin"] == ["#111111"]
    assert len(problems) == 1
    assert str(second) in problems[0] and "a.toml" in problems[0]


BROKEN = {
    "syntax.toml": ('name = "syntax"\nprimary = \n', ["not valid TOML", "line 2", "column"]),
    "colour.toml": (
        'name = "colour"\nprimary = "#7aa2f7"\n[variables]\ntool-failed = "#ff00zz"\n',
        ["variables.tool-failed", "'#ff00zz'", "not a colour"],
    ),
    "nameless.toml": ('primary = "#7aa2f7"\n', ["no name"]),
    "typo.toml": (
        'name = "typo"\nprimay = "#7aa2f7"\n',
        ["unknown key 'primay'", "did you mean 'primary'"],
    ),
    "variable.toml": (
        'name = "variable"\nprimary = "#7aa2f7"\n[variables]\ntool-runing = "#ffffff"\n',
        ["unknown variable 'tool-runing'", "'tool-running'"],
    ),
}


@pytest.mark.parametrize("filename", sorted(BROKEN))
async def test_a_broken_user_theme_is_one_problem_and_the_rest_still_load(
    config_dir: Path, filename: str
) -> None:
    text, reasons = BROKEN[filename]
    broken = write_theme(config_dir, filename, text)
    write_theme(config_dir, "good.toml", 'name = "good"\nprimary = "#00aa00"\n')
    app = Swatches(theme="good")
    async with app.run_test():
        assert len(app.problems) == 1
        problem = app.problems[0]
        assert str(broken) in problem
        for reason in reasons:
            assert reason in problem
        assert app.theme == "good"
        assert set(BUILTINS) <= set(app.available_themes)
        assert broken.stem not in app.available_themes


def test_a_broken_file_raises_a_theme_error_with_its_path_and_reason(config_dir: Path) -> None:
    path = write_theme(config_dir, "bad.toml", 'name = "bad"\nprimary = "bleu"\n')
    with pytest.raises(ThemeError) as caught:
        load_theme_file(path)
    assert caught.value.path == path
    assert "primary = 'bleu' is not a colour" in caught.value.reason
    assert "did you mean 'blue'" in caught.value.reason


def test_all_user_themes_broken_still_leaves_the_builtins(config_dir: Path) -> None:
    for filename, (text, _) in BROKEN.items():
        write_theme(config_dir, filename, text)
    themes, problems = load_themes()
    assert len(problems) == len(BROKEN)
    assert [theme.name for theme in themes] == sorted(BUILTINS)


# --- choosing one ----------------------------------------------------------------------------


async def test_an_unknown_theme_name_falls_back_to_the_default_and_says_so() -> None:
    app = Swatches(theme="solarised-nope")
    async with app.run_test():
        assert app.theme == DEFAULT_THEME
        assert len(app.problems) == 1
        problem = app.problems[0]
        assert "'solarised-nope'" in problem and DEFAULT_THEME in problem
        assert all(name in problem for name in BUILTINS)


# --- legibility ------------------------------------------------------------------------------


def contrast(first: str, second: str) -> float:
    """The WCAG 2 contrast ratio of two opaque colours."""

    def luminance(colour: Color) -> float:
        def channel(value: int) -> float:
            c = value / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(colour.r) + 0.7152 * channel(colour.g) + 0.0722 * channel(colour.b)

    lighter, darker = sorted((luminance(Color.parse(first)), luminance(Color.parse(second))))[::-1]
    return (lighter + 0.05) / (darker + 0.05)


def test_the_contrast_measure_is_the_wcag_one() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


def test_high_contrast_is_high_contrast() -> None:
    theme = builtin("proctor-high-contrast")
    assert theme.foreground and theme.background and theme.surface and theme.panel
    assert contrast(theme.foreground, theme.background) >= 7
    for backdrop in (theme.background, theme.surface, theme.panel):
        for key in STATE_COLOURS:  # tool states, modes, risk and diffs
            assert contrast(theme.variables[key], backdrop) >= 4.5, (key, backdrop)


@pytest.mark.parametrize("name", ["proctor-dark", "proctor-light"])
def test_state_colours_read_on_the_backgrounds(name: str) -> None:
    theme = builtin(name)
    assert theme.foreground and theme.background and theme.surface
    assert contrast(theme.foreground, theme.background) >= 7
    for key in STATE_COLOURS:
        for backdrop in (theme.background, theme.surface):
            assert contrast(theme.variables[key], backdrop) >= 3, (key, backdrop)


def test_textual_can_derive_its_colours_from_every_built_in_theme():
    """The app skips this check at start-up for its own themes; here it is made."""
    from themes import THEME_FILES
    from tui.theming import load_theme_file

    for path in THEME_FILES:
        theme = load_theme_file(path, derive=True)
        assert theme.to_color_system().generate()
