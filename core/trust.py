"""Which projects the user trusts to run their own hooks and settings.

A cloned repository's `.proctor/` or `.claude/` files may hold hook commands; they run only
after the user said yes once for that directory. The answer lives in
`user_config_dir()/trusted-projects.json` as `{"trusted": ["/resolved/path", ...]}`.

Trust is per exact directory (resolved, so a symlink and its target are one project);
trusting a directory does not trust its subdirectories, so a nested checkout asks again.
A store that cannot be read or parsed means "nothing is trusted" (fail closed). `trust()`
then moves the bad file aside to `trusted-projects.json.bad` before writing a fresh one,
so nothing the user wrote by hand is silently lost.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .config_dir import user_config_dir
from .settings.write import SettingsWriteError, write_json_atomically

STORE_NAME = "trusted-projects.json"


def store_path() -> Path:
    return user_config_dir() / STORE_NAME


def _key(project: Path) -> str:
    return str(project.expanduser().resolve())


def _read() -> list[str] | None:
    """The trusted paths; [] when there is no store, None when it is unusable."""
    try:
        data = json.loads(store_path().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        return None
    trusted = data.get("trusted") if isinstance(data, dict) else None
    if not isinstance(trusted, list):
        return None
    return [item for item in trusted if isinstance(item, str)]


def is_trusted(project: Path) -> bool:
    try:
        return _key(project) in (_read() or [])
    except (OSError, RuntimeError):  # resolve() on a symlink loop
        return False


def trust(project: Path) -> None:
    """Remember `project` as trusted; raises `SettingsWriteError` if the store cannot be written."""
    key = _key(project)
    trusted = _read()
    if trusted is None:
        path = store_path()
        try:
            os.replace(path, path.with_name(STORE_NAME + ".bad"))
        except OSError as error:
            raise SettingsWriteError(f"{path} is unusable and cannot be moved: {error}") from None
        trusted = []
    if key not in trusted:
        write_json_atomically(store_path(), {"trusted": [*trusted, key]})
