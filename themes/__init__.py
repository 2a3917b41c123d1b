"""Styles and themes, kept as data: `.tcss` stylesheets and `.toml` theme definitions.

A package only so that the files ship with proctor; there is no code to speak of here (the
loader, which needs Textual, is `tui/theming.py`). Every `*.toml` in this directory is a
built-in theme, so adding one is adding a file.
"""

from pathlib import Path

DIRECTORY = Path(__file__).resolve().parent
APP_STYLESHEET = DIRECTORY / "app.tcss"
BUILTIN_THEMES_DIR = DIRECTORY
THEME_FILES: tuple[Path, ...] = tuple(sorted(DIRECTORY.glob("*.toml")))
