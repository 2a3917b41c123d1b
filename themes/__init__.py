"""Styles and themes, kept as data: `.tcss` stylesheets (and, later, theme definitions).

A package only so that the files ship with proctor; there is no code to speak of here.
"""

from pathlib import Path

DIRECTORY = Path(__file__).resolve().parent
APP_STYLESHEET = DIRECTORY / "app.tcss"
