"""Regenerate the SVG screenshots shown in the README from the real app.

    python screenshots/make.py

Each shot drives the app headless through Textual's Pilot at a fixed size and saves what
the screen shows, so the README never drifts from what users see.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tui.app import ProctorApp  # noqa: E402

SIZE = (100, 30)


async def welcome() -> None:
    app = ProctorApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.save_screenshot(filename="welcome.svg", path=str(HERE))


def main() -> None:
    asyncio.run(welcome())
    print(f"wrote {HERE / 'welcome.svg'}")


if __name__ == "__main__":
    main()
