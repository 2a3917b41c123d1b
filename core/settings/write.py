"""Writing settings back: a remembered allow rule, a rule `/permissions` adds to or takes
from a file, and any JSON file replaced atomically.

A settings file is the user's own: an update keeps every other key, value and the key order,
and a file proctor cannot make sense of (not JSON, not an object, `permissions.allow` not a
list) is never overwritten; the caller gets a `SettingsWriteError` naming the file instead.
Each write goes to a temporary file beside the target and is renamed over it, so a reader
(another proctor starting up, say) sees the old file or the new one, never half of one. The
trust store writes its file the same way (`write_json_atomically`).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..access.context import PermissionRule, RuleBehavior
from ..access.rules import RuleSyntaxError, parse_rule
from .paths import settings_paths
from .problems import kind_of
from .read import read_settings_bytes


class SettingsWriteError(Exception):
    """A settings file could not be updated; the message names the file (and line)."""


def remember_allow_rule(cwd: Path, rule: str) -> Path:
    """Add `rule` to permissions.allow of the local settings file, atomically.

    Every other key, value and the key order are kept; a rule already there (as written, or
    meaning the same) is not added twice. A file that is not a JSON object, or whose
    `permissions`/`allow` have the wrong type, is never overwritten: `SettingsWriteError`.
    """
    path = settings_paths(cwd)["local"]
    add_rule(path, "allow", rule, inside=cwd)
    return path


def add_rule(path: Path, behavior: RuleBehavior, rule: str, *, inside: Path | None = None) -> bool:
    """Add `rule` to `permissions.<behavior>` of the settings file at `path` (made when
    missing), as `remember_allow_rule` does; False when it was there already (unchanged).
    `inside`: the project a project's file must stay in once links are followed."""
    try:
        wanted = parse_rule(rule, behavior)
    except RuleSyntaxError as error:
        raise SettingsWriteError(f"cannot add {rule!r} to {path}: {error}") from None
    _check_inside(path, inside)
    data = _read_for_update(path)
    listed = _rule_list(data, path, behavior)
    if any(_same_rule(existing, wanted) for existing in listed):
        return False
    listed.append(str(wanted))
    _write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return True


def remove_rule(
    path: Path, behavior: RuleBehavior, rule: str, *, inside: Path | None = None
) -> bool:
    """Take every entry meaning `rule` out of `permissions.<behavior>` of the file at `path`,
    keeping the rest; False when it holds none (the file is then not touched)."""
    try:
        wanted = parse_rule(rule, behavior)
    except RuleSyntaxError as error:
        raise SettingsWriteError(f"cannot remove {rule!r} from {path}: {error}") from None
    _check_inside(path, inside)
    if not path.exists():
        return False
    data = _read_for_update(path)
    permissions = data.get("permissions")
    if not isinstance(permissions, dict) or behavior not in permissions:
        return False
    listed = _rule_list(data, path, behavior)
    kept = [existing for existing in listed if not _same_rule(existing, wanted)]
    if len(kept) == len(listed):
        return False
    listed[:] = kept
    _write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return True


def _check_inside(path: Path, project: Path | None) -> None:
    """A project's settings file (or its `.proctor` folder) that is a link out of the project
    is not written: a cloned repository would otherwise choose where a remembered rule goes,
    or have the update copy another file (the user's own settings) into one it commits."""
    if project is None:
        return
    try:
        resolved = path.resolve()
        outside = not resolved.is_relative_to(project.resolve())
    except (OSError, RuntimeError) as error:
        raise SettingsWriteError(f"{path} cannot be resolved ({error}); not changed") from None
    if outside:
        raise SettingsWriteError(
            f"{path} is a link to {resolved}, outside the project; not changed"
        )


def _rule_list(data: dict[str, Any], path: Path, behavior: RuleBehavior) -> list[Any]:
    """`data["permissions"][behavior]`, made when missing; a wrong type is never replaced."""
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise SettingsWriteError(f'{path}: "permissions" is not an object; not changed')
    listed = permissions.setdefault(behavior, [])
    if not isinstance(listed, list):
        raise SettingsWriteError(f'{path}: "permissions.{behavior}" is not a list; not changed')
    return listed


def _same_rule(existing: Any, wanted: PermissionRule) -> bool:
    if not isinstance(existing, str):
        return False
    try:
        parsed = parse_rule(existing, wanted.behavior)
    except RuleSyntaxError:
        return False
    return (parsed.tool_name, parsed.content) == (wanted.tool_name, wanted.content)


def _read_for_update(path: Path) -> dict[str, Any]:
    try:
        text = read_settings_bytes(path).decode("utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsWriteError(f"{path} cannot be read ({error}); not changed") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise SettingsWriteError(
            f"{path}:{error.lineno}:{error.colno}: not valid JSON ({error.msg}); "
            "fix it by hand, it was not changed"
        ) from None
    except RecursionError:
        raise SettingsWriteError(f"{path}: nested too deep to read; not changed") from None
    if not isinstance(data, dict):
        raise SettingsWriteError(f"{path}: holds {kind_of(data)}, not an object; not changed")
    return data


def write_json_atomically(path: Path, value: Any) -> None:
    """Replace `path` with `value` as JSON in one step (also used by the trust store)."""
    _write_atomically(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _write_atomically(path: Path, text: str) -> None:
    """A reader sees the old file or the new one, never half of one."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o644
        handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as error:
        raise SettingsWriteError(f"cannot write {path}: {error}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, path)
    except OSError as error:
        Path(temp_name).unlink(missing_ok=True)
        raise SettingsWriteError(f"cannot write {path}: {error}") from None
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
