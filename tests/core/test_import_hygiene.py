"""`core` never loads the UI stack, and nothing loads anthropic until a model is needed.

Each module is imported in a fresh interpreter, so one module cannot hide behind another
that happened to import first.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import core

FORBIDDEN = ("textual", "rich", "tui", "anthropic")
ROOT = Path(__file__).resolve().parents[2]

CHECK = """
import importlib, sys
importlib.import_module({module!r})
loaded = sorted({{name.split(".")[0] for name in sys.modules}} & set({forbidden!r}))
print(",".join(loaded))
"""


def core_modules() -> list[str]:
    found = ["core"]
    for info in pkgutil.walk_packages(core.__path__, prefix="core."):
        found.append(info.name)
    return found


def loaded_by(module: str) -> str:
    script = CHECK.format(module=module, forbidden=FORBIDDEN)
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"importing {module} failed:\n{result.stderr}"
    return result.stdout.strip()


def test_every_core_module_imports_without_the_ui_stack():
    modules = core_modules()
    assert "core.executor.streaming" in modules and "core.results" in modules
    with ThreadPoolExecutor(max_workers=4) as pool:
        loaded = dict(zip(modules, pool.map(loaded_by, modules), strict=True))
    offenders = {module: names for module, names in loaded.items() if names}
    assert offenders == {}
