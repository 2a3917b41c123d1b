"""From a policy to a fence: what one sandboxed command may read and write, built in the parent.

Why it is shaped this way:

- Landlock is an allow-list: reads are granted on the system's program directories, the
  project, the extra working directories, the toolchains on PATH and the private scratch
  directory; writes (workspace) on the project and the extra directories. Everything else
  (the home directory, /tmp, other users' files) is refused by the kernel.
- Landlock cannot take a path back out of a tree it granted, so carve-outs (a file a `Read`
  deny rule covers, a secret under /etc, `.git/config` in a writable project) are made with
  the mount namespace: a denied file or directory is covered by an empty one nobody may
  open, a protected one is bound read-only onto itself. Without user namespaces (some
  distributions forbid them) the same carve-outs are made by granting the tree piece by
  piece around them, which also means no new top-level entries in a writable root.
- A protected path that does not exist yet cannot be covered (a mount needs something to
  mount on), and creating a placeholder would litter the user's project. So it is checked
  after the command: if the command created one, it is moved out of the project into the
  session's quarantine, and the result says so.
- Floating deny rules (`Read(.env)` matches at any depth) are found by walking the project,
  with a listing cache keyed by each directory's mtime, so a second command re-reads only
  directories that changed.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..access.paths import PROTECTED_NAMES, PathPattern, is_within
from ..access.sandbox_policy import ReadOnly, SandboxPolicy, Workspace
from . import kernel
from .support import SandboxSupport

SYSTEM_READ_ROOTS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix",
    "/snap",
    "/proc",
    "/sys",
)
DEVICES_READ = ("/dev/zero", "/dev/random", "/dev/urandom")
DEVICES_WRITE = ("/dev/null", "/dev/full")

SYSTEM_SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
)
HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".config/gh",
    ".config/gcloud",
    ".password-store",
    ".local/share/keyrings",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".pyenv/.pyenv-credentials",
    ".config/git/credentials",
    ".git-credential-cache",
)
HOME_READABLE = (
    ".gitconfig",
    ".config/git/config",
    ".config/git/ignore",
    ".config/git/attributes",
)
"""Configuration in the home directory that everyday read-only commands cannot do without:
git stops with "fatal" when ~/.gitconfig exists but cannot be read."""
GIT_PROTECTED = ("config", "config.worktree", "commondir", "hooks", "modules", "worktrees")
"""Inside `.git`: what makes git run a program, or read configuration from elsewhere
(`commondir` points git at another repository's config)."""
_SECRET_ENV_WORDS = (
    "KEY", "TOKEN", "SECRET", "PASS", "CREDENTIAL", "AUTH", "DSN", "PRIVATE", "COOKIE",
    "SESSION", "_PAT",
)  # fmt: skip
_URL_WITH_PASSWORD = re.compile(r"://[^/@\s:]+:[^/@\s]+@")
_WALK_LIMIT = 200_000
_ETC_RESCAN_S = 5.0
_PATH_LIMIT = 3_900
"""Deeper paths cannot be opened by path (PATH_MAX is 4096) nor covered by a mount."""
_MASK_LIMIT = 5_000
_NOT_WALKED = frozenset(p for p in SYSTEM_READ_ROOTS if p != "/etc")
"""Too big (/usr) or endless (/proc) to search for paths a deny pattern covers: patterns
reach into them only by naming a path there outright (`//usr/share/secret`)."""
_UNLIKELY = "proctor-sandbox-probe-name"
_NO_SOCKETS: frozenset[int] = frozenset()

QUARANTINE_DIRNAME = "sandbox-quarantine"


@dataclass(frozen=True, slots=True)
class FenceInputs:
    """What the session knows when a command is about to run."""

    project: Path
    additional_dirs: tuple[Path, ...] = ()
    deny_read: tuple[PathPattern, ...] = ()
    """`Read` deny rules and `sandbox.filesystem.denyRead`, compiled."""
    deny_write: tuple[PathPattern, ...] = ()
    """`Edit` deny rules and `sandbox.filesystem.denyWrite`, compiled."""
    allow_read: tuple[Path, ...] = ()
    allow_write: tuple[Path, ...] = ()
    protected_files: tuple[Path, ...] = ()
    """Files that run outside the sandbox later (hook scripts): never writable."""
    home: Path = field(default_factory=Path.home)


@dataclass(slots=True)
class Fence:
    """One command's fence: the child's part, its environment, and what to do afterwards."""

    policy: SandboxPolicy
    child: kernel.ChildFence
    scratch: Path
    env_changes: Mapping[str, str | None]
    missing_protected: tuple[Path, ...]
    quarantine_dir: Path | None
    _ruleset: kernel.Ruleset

    @property
    def cwd_file(self) -> Path:
        return self.scratch / ".proctor-cwd"

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        return with_changes(base, self.env_changes)

    def release_ruleset(self) -> None:
        """The child has its copy once started; the parent's is no longer needed."""
        self._ruleset.close()

    def finish(self) -> tuple[str, ...]:
        """After the command: move out any protected path it created, remove the scratch
        directory. Returns notes for the result."""
        self._ruleset.close()
        notes = self._quarantine()
        shutil.rmtree(self.scratch, ignore_errors=True)
        return notes

    def _quarantine(self) -> tuple[str, ...]:
        notes: list[str] = []
        for path in self.missing_protected:
            if not os.path.lexists(path):
                continue
            destination = self._quarantine_path(path)
            try:
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(path), str(destination))
            except OSError as error:
                # Out of the way at least: under a name nothing reads.
                aside = path.with_name(f"{path.name}.proctor-quarantined-{time.time_ns()}")
                try:
                    os.rename(path, aside)
                except OSError:
                    notes.append(
                        f"WARNING: the sandboxed command created {path}, a protected path, "
                        f"and it could not be moved away ({error}). Remove it before running "
                        "anything else in this project."
                    )
                    continue
                destination = aside
            notes.append(
                f"The sandboxed command created {path}, which is protected (it can make later "
                f"commands run code), so it was moved to {destination}."
            )
        return tuple(notes)

    def _quarantine_path(self, path: Path) -> Path:
        base = self.quarantine_dir or Path(tempfile.gettempdir()) / "proctor-quarantine"
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return base / f"{stamp}-{os.getpid()}" / path.relative_to(path.anchor)


Stamp = tuple[int, int, int]
Covers = Callable[[str, bool], bool]


class DirectoryIndex:
    """Directory listings, and searches over them, cached by each directory's stamp (mtime,
    ctime and inode: ctime cannot be set back by a command the way mtime can). Searching the
    same project again costs one `stat` per directory; only directories that changed are
    listed and matched again."""

    def __init__(self) -> None:
        self._listings: dict[str, tuple[Stamp, list[tuple[str, bool]]]] = {}
        self._searches: dict[tuple[str, object], tuple[Stamp, list[str], list[str]]] = {}
        self._private: dict[str, tuple[Stamp, list[str], list[str]]] = {}

    def walk(
        self,
        root: Path,
        *,
        skip: Callable[[Path, bool], bool] | None = None,
        purpose: str = "the paths the deny rules cover; narrow the rules (anchor them: "
        "./secrets/**)",
    ) -> Iterator[Path]:
        """Every path below `root` (not following symlinks). `skip(path, is_dir)` true for a
        directory leaves out what is below it. More than `_WALK_LIMIT` entries is an
        OSError: a search that stops halfway would miss what it is for."""
        pending = [os.fspath(root)]
        seen = 0
        while pending:
            directory = pending.pop()
            for name, is_dir in self._list(directory)[1]:
                path = os.path.join(directory, name)
                seen += 1
                if seen > _WALK_LIMIT:
                    raise OSError(
                        f"{root} has more than {_WALK_LIMIT:,} entries to search for {purpose}"
                    )
                if len(path) > _PATH_LIMIT:
                    continue  # too deep to be opened by path; nothing to cover there
                found = Path(path)
                yield found
                if is_dir and not (skip is not None and skip(found, is_dir)):
                    pending.append(path)

    def search(
        self, start: str, key: object, covers: Covers, skip: Callable[[str], bool]
    ) -> Iterator[str]:
        """Paths below `start` that `covers(path, is_dir)`, not descending into them or into
        what `skip` names. `key` names the question, so its answers can be kept."""
        pending = [start]
        seen = 0
        while pending:
            directory = pending.pop()
            stamp, entries = self._list(directory)
            seen += len(entries)
            if seen > _WALK_LIMIT:
                raise OSError(
                    f"{start} has more than {_WALK_LIMIT:,} entries to search for the paths "
                    "the deny rules cover; narrow the rules (anchor them: ./secrets/**)"
                )
            memo = self._searches.get((directory, key))
            if memo is None or memo[0] != stamp:
                covered: list[str] = []
                below: list[str] = []
                for name, is_dir in entries:
                    path = os.path.join(directory, name)
                    if len(path) > _PATH_LIMIT:
                        continue
                    if covers(path, is_dir):
                        covered.append(path)
                    elif is_dir and not skip(path):
                        below.append(path)
                memo = (stamp, covered, below)
                self._searches[(directory, key)] = memo
            yield from memo[1]
            pending.extend(memo[2])

    def private(self, root: str) -> Iterator[str]:
        """Files and directories below `root` that not everyone may read (`/etc/shadow`,
        a wireguard key): the sandbox hides them even from root."""
        pending = [root]
        while pending:
            directory = pending.pop()
            stamp, entries = self._list(directory)
            memo = self._private.get(directory)
            if memo is None or memo[0] != stamp:
                hidden: list[str] = []
                below: list[str] = []
                for name, is_dir in entries:
                    path = os.path.join(directory, name)
                    try:
                        mode = os.lstat(path).st_mode
                    except OSError:
                        continue
                    if stat.S_ISLNK(mode):
                        continue
                    if not mode & stat.S_IROTH:
                        hidden.append(path)
                    elif is_dir:
                        below.append(path)
                memo = (stamp, hidden, below)
                self._private[directory] = memo
            yield from memo[1]
            pending.extend(memo[2])

    def _list(self, directory: str) -> tuple[Stamp, list[tuple[str, bool]]]:
        try:
            info = os.stat(directory)
        except OSError:
            return (0, 0, 0), []
        stamp = (info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        cached = self._listings.get(directory)
        if cached is not None and cached[0] == stamp:
            return cached
        entries: list[tuple[str, bool]] = []
        try:
            with os.scandir(directory) as scan:
                for entry in scan:
                    try:
                        entries.append((entry.name, entry.is_dir(follow_symlinks=False)))
                    except OSError:
                        continue
        except OSError:
            return stamp, []
        self._listings[directory] = (stamp, entries)
        return stamp, entries


class FenceBuilder:
    """Builds fences for one session: its scratch area, its mask files, its listing cache."""

    def __init__(self, support: SandboxSupport, *, session_dir: Path | None = None) -> None:
        self.support = support
        self.session_dir = session_dir
        self.index = DirectoryIndex()
        # Scratch directories and masks live with the session when there is one: nothing is
        # left in /tmp by a session that ends badly.
        parent = None
        if session_dir is not None:
            with contextlib.suppress(OSError):
                session_dir.mkdir(parents=True, exist_ok=True)
                parent = os.fspath(session_dir)
        self._root = Path(tempfile.mkdtemp(prefix="sandbox-", dir=parent))
        self._mask_file = self._root / "denied-file"
        self._mask_dir = self._root / "denied-dir"
        self._mask_file.touch()
        self._mask_dir.mkdir()
        self._bash = shutil.which("bash") or "/bin/bash"
        self._read_roots: tuple[object, list[Path]] | None = None
        self._etc_private: tuple[float, list[Path]] | None = None

    def close(self) -> None:
        shutil.rmtree(self._root, ignore_errors=True)

    def build(self, policy: ReadOnly | Workspace, inputs: FenceInputs, spool: Path | None) -> Fence:
        support = self.support
        # The owner of the masks could open them up again: they are closed before each use.
        os.chmod(self._mask_file, 0)
        os.chmod(self._mask_dir, 0)
        scratch = Path(tempfile.mkdtemp(prefix="cmd-", dir=self._root))
        ruleset = kernel.Ruleset(support.landlock_abi, handle_net=not support.namespaces)
        try:
            child, missing = self._rules(policy, inputs, ruleset, scratch, spool)
        except BaseException:
            ruleset.close()
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        quarantine = self.session_dir / QUARANTINE_DIRNAME if self.session_dir else None
        return Fence(
            policy,
            child,
            scratch,
            _environment(policy, scratch),
            missing,
            quarantine,
            ruleset,
        )

    # -- the rules -----------------------------------------------------------------------

    def _rules(
        self,
        policy: ReadOnly | Workspace,
        inputs: FenceInputs,
        ruleset: kernel.Ruleset,
        scratch: Path,
        spool: Path | None,
    ) -> tuple[kernel.ChildFence, tuple[Path, ...]]:
        support = self.support
        everything = kernel.fs_rights_for(support.landlock_abi)
        trees = _user_trees(inputs)
        roots_key = (inputs, os.environ.get("PATH", ""))
        if self._read_roots is None or self._read_roots[0] != roots_key:
            found = _unique(
                [
                    *(Path(p) for p in SYSTEM_READ_ROOTS),
                    *_toolchains(inputs.home),
                    *(inputs.home / name for name in HOME_READABLE),
                    *trees,
                    *inputs.allow_read,
                    Path(self._bash).parent,
                ]
            )
            self._read_roots = (roots_key, found)
        read_roots = self._read_roots[1]
        denied = _unique(self._denied_reads(inputs, read_roots, trees))
        writable: list[Path] = []
        protected: list[Path] = []
        missing: list[Path] = []
        if isinstance(policy, Workspace):
            writable = _unique([*trees, *inputs.allow_write])
            for root in writable:
                for path in _protected_in(root, inputs):
                    (protected if os.path.lexists(path) else missing).append(path)
                nested, absent = self._nested_git(root)
                protected += nested
                missing += absent
            protected += [
                path
                for path in self._matching(inputs.deny_write, writable, writable)
                if path not in protected
            ]
        if len(denied) + len(protected) > _MASK_LIMIT:
            raise OSError(
                f"{len(denied) + len(protected):,} paths would need covering, more than the "
                f"sandbox makes ({_MASK_LIMIT:,}); narrow the deny rules"
            )
        mounts: list[kernel.Mount] = []
        if support.namespaces:
            for root in read_roots:
                ruleset.allow(os.fspath(root), kernel.READ_RIGHTS)
            for root in writable:
                ruleset.allow(os.fspath(root), everything)
            # The child makes every mount read-only, then opens these again for writing.
            opened = [*writable, scratch, *([spool] if spool is not None else [])]
            for root in opened:
                if os.path.lexists(root):
                    mounts.append(kernel.Mount(os.fspath(root), os.fspath(root), "writable"))
            for path in _parents_to_pin([*protected, *missing, *denied], writable):
                mounts.append(kernel.Mount(os.fspath(path), os.fspath(path), "pin"))
            for path in denied:
                mask = os.fspath(self._mask_dir if path.is_dir() else self._mask_file)
                mounts.append(
                    kernel.Mount(mask, os.fspath(path), "read-only", kernel.mount_flags(mask))
                )
            for path in protected:
                target = os.fspath(path)
                flags = kernel.mount_flags(target)
                mounts.append(kernel.Mount(target, target, "read-only", flags))
        else:
            for root in read_roots:
                _grant_except(ruleset, root, denied, kernel.READ_RIGHTS)
            for root in writable:
                _grant_except(ruleset, root, [*protected, *missing, *denied], everything)
            missing = []  # the kernel refuses to create them: nothing to check afterwards
        ruleset.allow(os.fspath(scratch), everything)
        for device in DEVICES_READ:
            ruleset.allow(device, kernel.FS_READ_FILE)
        for device in DEVICES_WRITE:
            ruleset.allow(device, kernel.FS_READ_FILE | kernel.FS_WRITE_FILE | kernel.FS_TRUNCATE)
        if spool is not None:  # `> /dev/stdout` opens the spool again, by path
            ruleset.allow(os.fspath(spool), kernel.FS_WRITE_FILE)
        families = _SOCKETS_WITH_PRIVATE_NETWORK if support.namespaces else _NO_SOCKETS
        child = kernel.ChildFence(
            uid=os.getuid(),
            gid=os.getgid(),
            namespaces=support.namespaces,
            mounts=mounts,
            ruleset_fd=ruleset.fd,
            seccomp=kernel.seccomp_program(
                families,
                deny_ipc=not support.namespaces,
                deny_metadata=isinstance(policy, ReadOnly),
            )
            if support.seccomp
            else b"",
        )
        return child, tuple(missing)

    def _denied_reads(
        self, inputs: FenceInputs, read_roots: list[Path], trees: list[Path]
    ) -> Iterator[Path]:
        home = inputs.home
        for text in SYSTEM_SECRETS:
            path = Path(text)
            if os.path.lexists(path) and _within_any(path, read_roots):
                yield path
        # Anything else under /etc that not everyone may read is a secret too.
        now = time.monotonic()
        if self._etc_private is None or now - self._etc_private[0] > _ETC_RESCAN_S:
            # /etc changes rarely, and searching it costs a stat per directory: at most
            # once every few seconds.
            self._etc_private = (now, [Path(p) for p in self.index.private("/etc")])
        yield from self._etc_private[1]
        for text in HOME_SECRETS:
            path = home / text
            if os.path.lexists(path) and _within_any(path, read_roots):
                yield path
        yield from self._matching(inputs.deny_read, read_roots, trees)

    def _matching(
        self, patterns: Iterable[PathPattern], roots: list[Path], trees: list[Path]
    ) -> Iterator[Path]:
        """Existing paths the patterns cover inside `roots`: anchored patterns from where
        they are anchored, floating ones by walking the user's own trees. A directory whose
        whole content is covered is one path, not one per file."""
        patterns = list(patterns)
        floating = [p for p in patterns if not p.roots]
        for pattern in patterns:
            for root in pattern.roots:
                start = _literal_start(pattern, root)
                if start is None:
                    continue
                if _within_any(start, roots):
                    starts = [start]
                else:  # above the readable trees (`//**/*.pem`): search inside them only
                    starts = [r for r in roots if is_within(r, start)]
                for place in starts:
                    yield from self._search(place, [pattern])
        if floating:
            for tree in trees:
                yield from self._search(tree, floating)

    def _search(self, start: Path, patterns: list[PathPattern]) -> Iterator[Path]:
        if any(_fast_covers(p, os.fspath(start), start.is_dir()) for p in patterns):
            yield start
            return
        if any(is_within(start, Path(p)) for p in _NOT_WALKED):
            return
        if not start.is_dir() or start.is_symlink():
            return
        key = tuple((p.text, p.roots) for p in patterns)

        def covers(path: str, is_dir: bool) -> bool:
            return any(_fast_covers(p, path, is_dir) for p in patterns)

        def skip(path: str) -> bool:
            # git's object store holds nothing a path rule could name by path.
            return path.endswith("/.git/objects")

        for path in self.index.search(os.fspath(start), key, covers, skip):
            yield Path(path)

    def _nested_git(self, root: Path) -> tuple[list[Path], list[Path]]:
        """The configuration and hooks of git repositories inside a writable tree (not its
        own, which `_protected_in` covers), existing and not yet existing: a later, approved
        git command there would run whatever a sandboxed command planted."""
        found: list[Path] = []
        absent: list[Path] = []

        def skip(path: Path, is_dir: bool) -> bool:
            return path.name in (".git", "node_modules")

        purpose = (
            "git repositories whose hooks the workspace sandbox must protect; run such "
            "commands with approval instead"
        )
        for path in self.index.walk(root, skip=skip, purpose=purpose):
            if path.name != ".git" or path.parent == root:
                continue
            if path.is_dir():
                for name in GIT_PROTECTED:
                    (found if os.path.lexists(path / name) else absent).append(path / name)
            else:
                found.append(path)
        return found, absent


_SOCKETS_WITH_PRIVATE_NETWORK = frozenset({2, 10})  # AF_INET, AF_INET6: the namespace's own lo


def _environment(policy: SandboxPolicy, scratch: Path) -> dict[str, str | None]:
    changes: dict[str, str | None] = {
        "TMPDIR": os.fspath(scratch),
        "TMP": os.fspath(scratch),
        "TEMP": os.fspath(scratch),
        "PROCTOR_SANDBOX": policy.kind,
    }
    if isinstance(policy, ReadOnly):
        changes.update(git_runs_no_code(os.environ))
    # What the sandbox keeps from being read on disk should not be readable in the
    # environment either.
    for name, value in os.environ.items():
        upper = name.upper()
        if (
            any(word in upper for word in _SECRET_ENV_WORDS)
            or upper.startswith("AWS_")
            or _URL_WITH_PASSWORD.search(value)
        ):
            changes[name] = None
    return changes


GIT_NO_CODE: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.sshCommand", "false"),
    ("credential.helper", ""),
)
"""Configuration a repository could use to run a program during a read-only git command.
Given as command-scope configuration (`GIT_CONFIG_COUNT`), it beats the repository's own
files, `include.path`s included."""


def with_changes(base: Mapping[str, str], changes: Mapping[str, str | None]) -> dict[str, str]:
    """`base` with `changes` applied: a value sets a variable, None removes it."""
    env = dict(base)
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def git_runs_no_code(environ: Mapping[str, str]) -> dict[str, str | None]:
    """Read-only git runs none of a repository's programs; the user's own environment
    configuration (if any) is kept and these are added after it."""
    try:
        first = int(environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        first = 0
    changes: dict[str, str | None] = {
        "GIT_CONFIG_COUNT": str(first + len(GIT_NO_CODE)),
        "GIT_PAGER": "cat",
        "GIT_EXTERNAL_DIFF": None,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_NO_LAZY_FETCH": "1",  # a partial clone would fetch missing objects over the network
    }
    for index, (key, value) in enumerate(GIT_NO_CODE, start=first):
        changes[f"GIT_CONFIG_KEY_{index}"] = key
        changes[f"GIT_CONFIG_VALUE_{index}"] = value
    return changes


def _user_trees(inputs: FenceInputs) -> list[Path]:
    return _unique([inputs.project, *inputs.additional_dirs])


def _toolchains(home: Path) -> Iterator[Path]:
    """Where the programs on PATH come from when they are not in a system directory: each
    such PATH directory, and for a `bin` or `shims` directory its parent (`~/.pyenv`,
    `~/.cargo`), except the home directory itself and `~/.local` (whose `share` holds
    keyrings: there only `lib`). And the Python proctor runs on."""
    system = [Path(root) for root in SYSTEM_READ_ROOTS]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        directory = Path(os.path.normpath(entry))
        if _within_any(directory, system) or len(directory.parts) < 3:
            continue
        yield directory
        parent = directory.parent
        if directory.name in ("bin", "shims") and parent != home and len(parent.parts) > 2:
            yield parent / "lib" if parent.name == ".local" else parent
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        path = Path(prefix)
        if not _within_any(path, system) and path != home and len(path.parts) > 2:
            yield path


def _parents_to_pin(paths: Iterable[Path], roots: Iterable[Path]) -> list[Path]:
    """The directories between a writable root and each carved-out path below it. Each is
    made a mount point, which cannot be renamed: `mv .git .git-old` would otherwise carry the
    read-only `config` away and leave room for a new one."""
    roots = list(roots)
    pins: dict[Path, None] = {}
    for path in paths:
        for root in roots:
            if not is_within(path, root) or path == root:
                continue
            parent = path.parent
            chain: list[Path] = []
            while parent != root and is_within(parent, root):
                chain.append(parent)
                parent = parent.parent
            for directory in reversed(chain):
                if directory.is_dir() and not directory.is_symlink():
                    pins.setdefault(directory, None)
    return list(pins)


def _protected_in(root: Path, inputs: FenceInputs) -> Iterator[Path]:
    for name in sorted(PROTECTED_NAMES - {".git"}):
        yield root / name
    git = root / ".git"
    if git.is_dir() and not git.is_symlink():
        for name in GIT_PROTECTED:
            yield git / name
    else:
        yield git  # a gitdir pointer file, or a repository not made yet
    configs = (
        git / "config",
        inputs.home / ".gitconfig",
        Path(os.environ.get("XDG_CONFIG_HOME") or inputs.home / ".config") / "git" / "config",
        Path("/etc/gitconfig"),
    )
    for hooks in _hooks_paths(*configs):
        path = Path(os.path.normpath(root / os.path.expanduser(hooks)))
        if is_within(path, root) and path != root:
            yield path
    for path in inputs.protected_files:
        if is_within(path, root):
            yield path


_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


def _hooks_paths(*configs: Path) -> list[str]:
    """`core.hooksPath` as the repository's and the user's git configuration set it: git
    runs the hooks it finds there, so a sandboxed command must not be able to plant one."""
    found: list[str] = []
    for config in configs:
        try:
            text = config.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found += [value.strip('"') for value in _HOOKS_PATH.findall(text)]
    return found


def _fast_covers(pattern: PathPattern, path: str, is_dir: bool) -> bool:
    """The pattern covers the path, or, for a directory, its every possible content. Works
    on strings with the kind of entry known, so a search stats nothing per file."""
    if pattern.roots:
        relatives = [_relative(path, os.fspath(root)) for root in pattern.roots]
        texts = [text for text in relatives if text is not None]
    else:
        texts = [path.lstrip("/")]
    spec = pattern.spec
    for text in texts:
        if spec.match_file(text) or (is_dir and text and spec.match_file(text + "/")):
            return True
        if is_dir:
            probe = f"{text}/{_UNLIKELY}" if text else _UNLIKELY
            if spec.match_file(probe) and spec.match_file(f"{probe}/{_UNLIKELY}"):
                return True
    return False


def _relative(path: str, root: str) -> str | None:
    if root == "/":
        return path.lstrip("/")
    if path == root:
        return ""
    return path[len(root) + 1 :] if path.startswith(root + "/") else None


def _literal_start(pattern: PathPattern, root: Path) -> Path | None:
    """The deepest path an anchored pattern names before its first wildcard."""
    start = root.joinpath(*pattern.literal_parts())
    return start if os.path.lexists(start) else None


def _grant_except(
    ruleset: kernel.Ruleset, root: Path, excluded: Iterable[Path], rights: int
) -> None:
    """Grant `rights` on `root` minus the excluded paths, by granting the pieces around them
    (Landlock alone cannot take a path back out of a granted tree)."""
    inside = [path for path in excluded if is_within(path, root)]
    if not inside:
        ruleset.allow(os.fspath(root), rights)
        return
    if any(path == root for path in inside):
        return
    try:
        if not stat.S_ISDIR(os.lstat(root).st_mode):
            return
        children = os.listdir(root)
    except OSError:
        return
    for name in children:
        _grant_except(ruleset, root / name, inside, rights)


def _within_any(path: Path, roots: Iterable[Path]) -> bool:
    return any(is_within(path, root) for root in roots)


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: dict[Path, None] = {}
    for path in paths:
        seen.setdefault(Path(os.path.normpath(path)), None)
    return list(seen)
