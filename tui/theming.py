"""Themes as data: load them from TOML, check them, register them on the app.

A theme file is the fields of Textual's `Theme` at the top level and its CSS variables in a
`[variables]` table. The built-ins live in `themes/`; a user drops more into
`<config dir>/themes/`. Everything here is checked before Textual sees it, because Textual
only notices a bad colour while it parses the stylesheet, and then the whole app fails to
start. So one broken file becomes one plain-words problem (which file, which key, what was
wrong) and the other themes still load; the app shows the problems instead of crashing.

Checking is deliberately strict about names (an unknown key or variable is a typo far more
often than a wish) and tolerant about what Textual tolerates (named colours, `rgb()`,
`hsl()`, a trailing `NN%` alpha on Textual's own variables).
"""

from __future__ import annotations

import difflib
import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from textual.app import App
from textual.color import Color, ColorParseError
from textual.css.constants import VALID_STYLE_FLAGS
from textual.design import ColorSystem
from textual.theme import Theme

from core.config_dir import user_config_dir
from themes import THEME_FILES
from tui.theme_vars import THEME_VARIABLE_DEFAULTS

DEFAULT_THEME = "proctor-dark"
# Textual always registers this one, so it is there even if proctor's own failed to load.
FALLBACK_THEME = "textual-dark"

_COLOUR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
_BOOL_KEYS = ("dark", "ansi")
_NUMBER_KEYS = ("luminosity_spread", "text_alpha")
KNOWN_KEYS = frozenset({"name", "variables", *_COLOUR_KEYS, *_BOOL_KEYS, *_NUMBER_KEYS})
"""Every top-level key a theme file may have: the fields of Textual's `Theme`."""

# The name becomes a CSS class (`-theme-<name>`) and a `--theme` argument: keep it plain.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*\Z")
_ALPHA = re.compile(r"\d+(\.\d+)?%\Z")
# Textual's variables also take these where a colour goes (`text: auto 87%`).
_COLOUR_KEYWORDS = frozenset({"auto", "initial"})


class ThemeError(Exception):
    """A theme file that cannot be used, and why, in words a user can act on."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def theme_variable_defaults() -> dict[str, str]:
    """proctor's variables with their fallback values, for `App.get_theme_variable_defaults`."""
    return dict(THEME_VARIABLE_DEFAULTS)


class ThemeVariablesMixin:
    """Put before `App` in the app's bases so that any theme, even one of Textual's own that
    knows nothing of tool states, leaves `$tool-running` and friends defined."""

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return theme_variable_defaults()


def user_themes_dir() -> Path:
    """Where a user's own themes live: `themes/` in proctor's config directory."""
    return user_config_dir() / "themes"


# --- one file ---------------------------------------------------------------------------------


def load_theme_file(path: Path, *, derive: bool = True) -> Theme:
    """Read and check one theme file; raise `ThemeError` naming the first thing wrong.

    `derive=False` skips deriving Textual's whole colour system from it, the costliest
    check; the app does so for its own themes, which the tests derive instead, since it
    would otherwise be paid on every start before the first frame."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ThemeError(path, f"could not be read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise ThemeError(path, "is not UTF-8 text") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # The message carries "(at line L, column C)".
        raise ThemeError(path, f"is not valid TOML: {exc}") from exc
    return _theme_from_data(path, data, derive=derive)


def _theme_from_data(path: Path, data: dict[str, Any], *, derive: bool = True) -> Theme:
    for key in data:
        if key not in KNOWN_KEYS:
            raise ThemeError(path, f"unknown key {key!r}{_did_you_mean(key, KNOWN_KEYS)}")
    name = data.get("name")
    if name is None:
        raise ThemeError(path, 'has no name: add a line like name = "my-theme"')
    if not isinstance(name, str) or not _NAME.match(name):
        raise ThemeError(
            path,
            f"name {name!r} must be letters, digits, '-' and '_' (it is used as --theme NAME)",
        )
    if "primary" not in data:
        raise ThemeError(path, "has no primary colour, which every theme needs")
    fields: dict[str, Any] = {"name": name}
    for key in _COLOUR_KEYS:
        if key in data:
            fields[key] = _colour(path, key, data[key])
    for key in _BOOL_KEYS:
        if key in data:
            if not isinstance(data[key], bool):
                raise ThemeError(path, f"{key} must be true or false, not {data[key]!r}")
            fields[key] = data[key]
    for key in _NUMBER_KEYS:
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ThemeError(path, f"{key} must be a number, not {value!r}")
            fields[key] = float(value)
    fields["variables"] = _variables(path, data.get("variables", {}))
    theme = Theme(**fields)
    if not derive:
        return theme
    try:
        # The same derivation Textual does on every refresh: if it fails here it would fail
        # there, later and fatally.
        theme.to_color_system().generate()
    except Exception as exc:
        raise ThemeError(path, f"Textual cannot derive its colours from it: {exc}") from exc
    return theme


def _variables(path: Path, table: object) -> dict[str, str]:
    if not isinstance(table, dict):
        raise ThemeError(path, "variables must be a table: a [variables] section")
    textual_names = _textual_variable_names()
    variables: dict[str, str] = {}
    for key, value in table.items():
        where = f"variables.{key}"
        if key in THEME_VARIABLE_DEFAULTS:
            # proctor's CSS adds its own alpha (`$tool-failed 20%`), so only a bare colour fits.
            variables[key] = _colour(path, where, value)
        elif key in textual_names:
            variables[key] = _textual_value(path, key, value)
        else:
            known = textual_names | THEME_VARIABLE_DEFAULTS.keys()
            raise ThemeError(path, f"unknown variable {key!r}{_did_you_mean(key, known)}")
    return variables


def _colour(path: Path, where: str, value: object) -> str:
    if not isinstance(value, str):
        raise ThemeError(path, f'{where} must be a colour in quotes, like "#7aa2f7"')
    try:
        Color.parse(value)
    except ColorParseError as exc:
        hint = f" (did you mean {exc.suggested_color!r}?)" if exc.suggested_color else ""
        usage = 'use "#rrggbb", rgb(), hsl() or a colour name'
        if where.startswith("variables.") and len(value.split()) > 1:
            usage = "proctor's variables take a plain colour, without an alpha"
        raise ThemeError(path, f"{where} = {value!r} is not a colour; {usage}{hint}") from exc
    return value


def _textual_value(path: Path, key: str, value: object) -> str:
    where = f"variables.{key}"
    if not isinstance(value, str):
        raise ThemeError(path, f"{where} must be a string in quotes, not {value!r}")
    words = value.split()
    if "style" in key.split("-"):
        bad = [word for word in words if word not in VALID_STYLE_FLAGS]
        if not words or bad:
            flags = ", ".join(sorted(VALID_STYLE_FLAGS))
            raise ThemeError(path, f"{where} = {value!r} is not a text style; use: {flags}")
        return value
    colour_ok = len(words) in (1, 2) and (len(words) == 1 or _ALPHA.match(words[1]))
    if colour_ok and words[0] not in _COLOUR_KEYWORDS:
        try:
            Color.parse(words[0])
        except ColorParseError:
            colour_ok = False
    if not colour_ok:
        raise ThemeError(
            path, f'{where} = {value!r} is not a colour; use "#rrggbb" or "#rrggbb 50%"'
        )
    return value


@cache
def _textual_variable_names() -> frozenset[str]:
    # Asked of the installed Textual rather than listed here, so an upgrade's new variables
    # are accepted without a change to proctor.
    return frozenset(ColorSystem(primary="#000000").generate())


def _did_you_mean(word: str, choices: frozenset[str] | set[str]) -> str:
    close = difflib.get_close_matches(word, sorted(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# --- all of them ------------------------------------------------------------------------------


def load_themes(user_dir: Path | None = None) -> tuple[list[Theme], list[str]]:
    """The built-in themes, then the user's, and one problem per file that was skipped.

    `user_dir` is the directory of user theme files (default: `user_themes_dir()`); it need
    not exist. A user theme with a built-in's name replaces the built-in, so a user can
    restyle `proctor-dark` itself. Two user files with one name: the first in name order
    wins and the second is reported.
    """
    problems: list[str] = []
    themes: dict[str, Theme] = {}
    for path in THEME_FILES:
        _load_into(themes, path, problems, derive=False)
    user_files, listing_problem = _user_theme_files(
        user_dir if user_dir is not None else user_themes_dir()
    )
    if listing_problem:
        problems.append(listing_problem)
    claimed: dict[str, Path] = {}
    for path in user_files:
        theme = _load_into(themes, path, problems, claimed)
        if theme is not None:
            claimed[theme.name] = path
    return list(themes.values()), problems


def _load_into(
    themes: dict[str, Theme],
    path: Path,
    problems: list[str],
    claimed: dict[str, Path] | None = None,
    *,
    derive: bool = True,
) -> Theme | None:
    try:
        theme = load_theme_file(path, derive=derive)
    except ThemeError as exc:
        problems.append(f"Skipped theme {exc.path}: {exc.reason}")
        return None
    if claimed is not None and theme.name in claimed:
        problems.append(
            f"Skipped theme {path}: {claimed[theme.name].name} already defines "
            f"a theme named {theme.name!r}"
        )
        return None
    themes[theme.name] = theme
    return theme


def _user_theme_files(directory: Path) -> tuple[list[Path], str | None]:
    try:
        if not directory.exists():
            return [], None
        if not directory.is_dir():
            return [], f"Skipped user themes: {directory} is not a directory"
        return sorted(p for p in directory.glob("*.toml") if p.is_file()), None
    except OSError as exc:
        return [], f"Skipped user themes: {directory} could not be read ({exc.strerror or exc})"


def register_themes(app: App[Any], user_dir: Path | None = None) -> list[str]:
    """Register every theme that loads on `app`; return the problems with the rest."""
    themes, problems = load_themes(user_dir)
    for theme in themes:
        app.register_theme(theme)
    return problems


def resolve_theme_name(app: App[Any], requested: str | None) -> tuple[str, str | None]:
    """The theme to use for a requested name (`--theme`, settings), and a problem if the
    name is unknown: an unknown theme falls back to the default rather than stopping the app.
    """
    default = DEFAULT_THEME if DEFAULT_THEME in app.available_themes else FALLBACK_THEME
    if requested is None:
        return default, None
    if requested in app.available_themes:
        return requested, None
    available = ", ".join(sorted(app.available_themes))
    return default, f"No theme named {requested!r}; using {default}. Available: {available}"


def install_themes(
    app: App[Any], requested: str | None = None, user_dir: Path | None = None
) -> list[str]:
    """Register the themes, switch `app` to the requested one (or the default) and return
    every problem for the user to see. Safe to call from the app's `__init__`."""
    problems = register_themes(app, user_dir)
    name, problem = resolve_theme_name(app, requested)
    app.theme = name
    if problem:
        problems.append(problem)
    return problems
