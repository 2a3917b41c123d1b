"""Path safety: where a path really is, whether it is inside the working directories, whether
it is protected, and whether a path rule covers it.

Paths are compared by components, never by string prefix (`/work/app-evil` is not inside
`/work/app`), after `.` and `..` are folded. Each path is judged twice, as written and as
resolved through symlinks (for a file that does not exist yet, through its nearest existing
parent): a deny matches if either form matches, an allow or "inside" holds only if both do.
So a symlink in the project pointing at `~/.ssh` is neither inside the project nor allowed by
`Edit(src/**)`.

Rule patterns are gitignore-style (pathspec): `//abs/path` is absolute, `~/p` is from the home
directory, `/p` from the rule's base (the project for project settings, the file's directory
for user settings), `p` and `./p` from the working directory. An allow is anchored where it
says; a deny or ask written relative matches at any depth, so `Read(.env)` covers every `.env`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .context import RuleBehavior

if TYPE_CHECKING:
    import pathspec  # imported where a pattern is compiled: a headless start needs none

PROTECTED_NAMES = frozenset(
    {
        ".git",
        ".proctor",
        ".claude",
        ".vscode",
        ".idea",
        ".husky",
        ".gitconfig",
        ".gitmodules",
        ".mcp.json",
        ".envrc",
        # Shell start-up files: whatever is written there runs in the user's next shell.
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".bash_aliases",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".cshrc",
        ".tcshrc",
        ".kshrc",
        ".inputrc",
    }
)


def absolute(path: str | Path, cwd: Path) -> Path:
    """The path made absolute against `cwd`, with `.` and `..` folded (no symlinks followed)."""
    return Path(os.path.normpath(os.path.join(cwd, os.fspath(path))))


def resolved(path: Path) -> Path:
    """Symlinks followed; for a path that does not exist, its nearest existing parent's.

    A path no file can have (a NUL byte in it) is returned as given: nothing can be opened
    there, so there is nothing for a symlink to hide."""
    try:
        return Path(os.path.realpath(path))
    except ValueError:
        return path


def both_forms(path: str | Path, cwd: Path) -> tuple[Path, Path]:
    """The path as written (`..` folded as text) and as the kernel resolves it: there,
    `link/..` is the parent of where `link` points, not the directory holding `link`, so
    the resolved form is worked out from the path before any folding."""
    given = absolute(path, cwd)
    try:
        unfolded = os.path.join(cwd, os.fspath(path))
    except (TypeError, ValueError):
        return given, resolved(given)
    return given, resolved(Path(unfolded))


def is_within(path: Path, directory: Path) -> bool:
    """Component-wise containment of two absolute, normalised paths (a path is within itself)."""
    parts, base = path.parts, directory.parts
    return parts[: len(base)] == base


def inside_working_dirs(path: str | Path, cwd: Path, directories: tuple[Path, ...]) -> bool:
    """Inside one of the working directories, both as written and as resolved."""
    given, real = both_forms(path, cwd)
    plain = [absolute(d, cwd) for d in directories]
    real_dirs = [resolved(d) for d in plain]
    return any(is_within(given, d) for d in (*plain, *real_dirs)) and any(
        is_within(real, d) for d in real_dirs
    )


def protected_part(path: str | Path, cwd: Path) -> str | None:
    """The protected component of the path (`.git`, `.bashrc`, ...), as written or resolved."""
    for form in both_forms(path, cwd):
        for part in form.parts:
            if part.lower() in PROTECTED_NAMES:
                return part
    return None


def is_critical(path: str | Path, cwd: Path, home: Path | None = None) -> bool:
    """A path whose removal would be a disaster: /, the home directory, a top-level
    directory, the working directory or one of its parents."""
    home = home if home is not None else Path.home()
    for form in both_forms(path, cwd):
        if len(form.parts) <= 2 or form == absolute(home, cwd) or is_within(cwd, form):
            return True
    return False


@dataclass(frozen=True, slots=True)
class PathPattern:
    """A compiled path rule. `roots` is where it is anchored, as written and as resolved (a
    project reached through a symlink is still the project); empty means "at any depth"."""

    roots: tuple[Path, ...]
    spec: pathspec.PathSpec[Any]
    text: str = ""
    """The gitignore-style pattern, as matched below the roots (`/secrets/**`)."""

    @classmethod
    def anchored(cls, root: Path, pattern: str) -> PathPattern:
        real = resolved(root)
        return cls((root,) if real == root else (root, real), _spec(pattern), pattern)

    def literal_parts(self) -> tuple[str, ...]:
        """The path parts the pattern names before its first wildcard (`/secrets/*.pem`:
        `secrets`): where a search for what it covers can start."""
        parts: list[str] = []
        for part in self.text.strip("/").split("/"):
            if not part or any(char in part for char in "*?[\\!"):
                break
            parts.append(part)
        return tuple(parts)

    def matches(self, path: Path) -> bool:
        if not self.roots:
            # Any depth: match against the whole absolute path, whose parts are all depths.
            return _match(self.spec, path.relative_to(path.anchor), path)
        return any(
            is_within(path, root) and _match(self.spec, path.relative_to(root), path)
            for root in self.roots
        )


def _match(spec: pathspec.PathSpec[Any], relative: Path, path: Path) -> bool:
    text = relative.as_posix()
    if text == ".":
        text = ""
    if spec.match_file(text):
        return True
    # A directory pattern (`secrets/`) covers the directory itself, not only what is in it.
    return bool(text) and path.is_dir() and spec.match_file(text + "/")


def compile_pattern(
    content: str, behavior: RuleBehavior, *, cwd: Path, base: Path | None, home: Path | None = None
) -> PathPattern:
    """Compile a path rule's specifier. `base` is where `/p` starts (the rule's settings)."""
    home = home if home is not None else Path.home()
    if content.startswith("//"):
        return PathPattern.anchored(Path("/"), "/" + content[2:])
    if content == "~" or content.startswith("~/"):
        return PathPattern.anchored(home, "/" + (content[2:] or "**"))
    if content.startswith("/"):
        return PathPattern.anchored(base or cwd, content)
    relative = content[2:] if content.startswith("./") else content
    if behavior == "allow":
        return PathPattern.anchored(cwd, "/" + relative)
    # Deny and ask: wherever it is. A leading **/ makes even `src/**` float to any depth.
    floating = relative if relative.startswith("**/") else "**/" + relative
    return PathPattern((), _spec(floating), floating)


@lru_cache(maxsize=1024)
def _spec(pattern: str) -> pathspec.PathSpec[Any]:
    import pathspec

    return pathspec.PathSpec.from_lines("gitignore", [pattern])


def pattern_covers(
    pattern: PathPattern, path: str | Path, cwd: Path, behavior: RuleBehavior
) -> bool:
    """Deny and ask: either form of the path matching is enough. Allow: both forms must."""
    given, real = both_forms(path, cwd)
    if behavior == "allow":
        return pattern.matches(given) and pattern.matches(real)
    return pattern.matches(given) or pattern.matches(real)
