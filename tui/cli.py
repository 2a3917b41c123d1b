"""The `proctor` command line.

Startup matters: `proctor --version` must answer without importing textual or anthropic
(each takes hundreds of milliseconds), so this module imports only the standard library and
`core`'s version, and loads the app lazily once it knows it will run it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from core import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="proctor",
        description="Supervised agent runs: watch, approve and steer every tool call.",
    )
    parser.add_argument("--version", action="version", version=f"proctor {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    build_parser().parse_args(argv)
    from .app import ProctorApp

    ProctorApp().run()
    return 0
