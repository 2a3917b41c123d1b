"""Real escapes, executed: each command tries to get out of the sandbox through the Bash tool,
and the test checks the side effect did not happen and that the result says why.

Every escape runs under both sandbox policies (read-only and workspace), as root when the
tests run as root (CI does), against canaries outside the project, in a fake home, behind a
`Read` deny rule, and against a TCP and a UDP listener this test opens on loopback.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest
from sandbox_helpers import (
    SUPPORT,
    Fenced,
    alive,
    exists,
    make_fenced,
    make_message_queue,
    needs_namespaces,
    needs_network_isolation,
    needs_sandbox,
    needs_seccomp,
    receive_message,
    remove_message_queue,
    remove_tree,
    repository_running,
    start_sleeper,
)

from core.access.sandbox_policy import ReadOnly, SandboxPolicy, Workspace
from core.sandbox.support import SandboxSupport
from core.settings.sandbox import SandboxSettings
from core.tools.shells.session import shell_session

pytestmark = needs_sandbox

ROOT = Path(__file__).resolve().parents[3]
READ_ONLY = ReadOnly("test")
WORKSPACE = Workspace("test")
POLICIES = [pytest.param(READ_ONLY, id="read-only"), pytest.param(WORKSPACE, id="workspace")]


@pytest.fixture
def fenced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fenced:
    return make_fenced(tmp_path, monkeypatch, rules=("deny Read(.env)",))


WRITES_OUTSIDE = [
    "touch {outside}",
    "echo pwned > {outside}",
    "cp src/app.py {outside}",
    "mkdir {outside}",
    "ln -s /etc/hostname {outside}",
    "sh -c 'echo pwned > {outside}'",
    "python3 -c \"open('{outside}', 'w').write('pwned')\"",
    "setsid sh -c 'echo pwned > {outside}'",
    "(cd / && echo pwned | tee {outside})",
    "find src -name app.py -exec cp {{}} {outside} \\;",
    "echo pwned | dd of={outside} 2>&1",
]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("template", WRITES_OUTSIDE)
async def test_nothing_is_written_outside_the_project(
    fenced: Fenced, policy: SandboxPolicy, template: str
):
    targets = [
        fenced.project.parent / "written-outside",
        fenced.home / "written-in-home",
        Path("/tmp") / f"proctor-escape-{os.getpid()}",
    ]
    for target in targets:
        _result, text = await fenced.run_in(policy, template.format(outside=target))
        assert not exists(target), f"{template} wrote {target}"
        assert "sandbox probably stopped it" in text, text
        assert "dangerously_disable_sandbox" in text


async def test_read_only_writes_nothing_even_inside_the_project(fenced: Fenced):
    for command in ("touch new.txt", "echo x >> src/app.py", "rm src/app.py", "mkdir build"):
        _, text = await fenced.run_in(READ_ONLY, command)
        assert "sandbox probably stopped it" in text
    assert sorted(p.name for p in fenced.project.iterdir()) == [".env", ".git", "src"]
    assert (fenced.project / "src" / "app.py").read_text() == "print('hi')\n"


async def test_workspace_writes_inside_the_project(fenced: Fenced):
    result, text = await fenced.run_in(
        WORKSPACE, "mkdir build && echo ok > build/out && cat build/out"
    )
    assert not result.is_error, text
    assert (fenced.project / "build" / "out").read_text() == "ok\n"


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    "command",
    [
        "rm -rf .git",
        "echo '[core] fsmonitor = evil' >> .git/config",
        "echo 'evil' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        "mv .git/config .git/config.old",
    ],
)
async def test_protected_git_paths_survive(fenced: Fenced, policy: SandboxPolicy, command: str):
    _, text = await fenced.run_in(policy, command)
    assert (fenced.project / ".git" / "config").read_text() == "[core]\n"
    assert not (fenced.project / ".git" / "hooks" / "pre-commit").exists()
    assert "sandbox probably stopped it" in text, text


@needs_namespaces
async def test_a_protected_directory_created_in_the_workspace_is_moved_out(fenced: Fenced):
    command = (
        'mkdir .proctor && echo \'{"permissions": {"allow": ["Bash"]}}\' > .proctor/settings.json'
    )
    _result, text = await fenced.run_in(WORKSPACE, command)
    assert not (fenced.project / ".proctor").exists()
    assert "protected" in text and "moved to" in text
    quarantine = fenced.project.parent / "session" / "sandbox-quarantine"
    assert list(quarantine.rglob("settings.json")), "the created file is kept for the user"


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    "command",
    [
        "cat $HOME/.ssh/id_rsa",
        "cat $HOME/notes.txt",
        "grep -r CANARY $HOME",
        "cat ../outside.txt",
        "grep -r CANARY .",
        "cat .env",
        "cp .env /dev/stdout",
        "python3 -c \"print(open('.env').read())\"",
        "env",
        "cat /proc/$PPID/environ | tr '\\0' '\\n'",
    ],
)
async def test_secrets_stay_unread(fenced: Fenced, policy: SandboxPolicy, command: str):
    _, text = await fenced.run_in(policy, command)
    assert "CANARY" not in text, f"{command} read a canary:\n{text}"


async def test_reading_the_project_still_works(fenced: Fenced):
    result, text = await fenced.run_in(READ_ONLY, "cat src/app.py && ls -a && python3 --version")
    assert not result.is_error, text
    assert "print('hi')" in text and "Python 3" in text


class Listeners:
    def __init__(self) -> None:
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen()
        self.tcp.setblocking(False)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)

    def connected(self) -> bool:
        try:
            self.tcp.accept()[0].close()
        except BlockingIOError:
            return False
        return True

    def received(self) -> bool:
        try:
            self.udp.recvfrom(100)
        except BlockingIOError:
            return False
        return True

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()


@pytest.fixture
def listeners():
    found = Listeners()
    yield found
    found.close()


@needs_network_isolation
@pytest.mark.parametrize("policy", POLICIES)
async def test_no_network(fenced: Fenced, policy: SandboxPolicy, listeners: Listeners):
    tcp = listeners.tcp.getsockname()[1]
    udp = listeners.udp.getsockname()[1]
    # A datagram sent into the private network is lost without an error: only the listener
    # can tell that nothing got out.
    await fenced.run_in(policy, f"echo hello > /dev/udp/127.0.0.1/{udp}")
    await fenced.run_in(
        policy,
        'python3 -c "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); '
        f"s.sendto(b'x', ('127.0.0.1', {udp}))\"",
    )
    commands = [
        f"echo hello > /dev/tcp/127.0.0.1/{tcp}",
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {tcp}), 2)\"",
        "python3 -c \"import socket; socket.getaddrinfo('example.com', 80)\"",
    ]
    for command in commands:
        _, text = await fenced.run_in(policy, command)
        assert "sandbox probably stopped it" in text, f"{command}:\n{text}"
    assert not listeners.connected(), "a TCP connection got out"
    assert not listeners.received(), "a UDP datagram got out"


@needs_seccomp
@pytest.mark.parametrize("policy", POLICIES)
async def test_unix_sockets_cannot_be_opened(fenced: Fenced, policy: SandboxPolicy, tmp_path: Path):
    path = tmp_path / "agent.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.setblocking(False)
    try:
        command = (
            f"python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{path}')\""
        )
        _, text = await fenced.run_in(policy, command)
        assert "Operation not permitted" in text
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()


@pytest.mark.parametrize("policy", POLICIES)
async def test_processes_outside_cannot_be_signalled(fenced: Fenced, policy: SandboxPolicy):
    sleeper = start_sleeper()
    try:
        _, text = await fenced.run_in(policy, f"kill -9 {sleeper.pid}; kill -9 $PPID")
        assert alive(sleeper.pid)
        assert "Operation not permitted" in text
    finally:
        sleeper.kill()
        sleeper.wait()


async def test_a_local_server_works_inside_its_own_network(fenced: Fenced):
    if not fenced.support.namespaces:
        pytest.skip("no private network namespace here")
    script = (
        "import socket, threading\n"
        "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
        "threading.Thread(target=lambda: s.accept()[0].sendall(b'pong'), daemon=True).start()\n"
        "c = socket.create_connection(s.getsockname()); print(c.recv(4).decode())\n"
    )
    (fenced.project / "serve.py").write_text(script)
    result, text = await fenced.run_in(WORKSPACE, "python3 serve.py")
    assert not result.is_error, text
    assert "pong" in text


async def test_background_commands_are_fenced_too(fenced: Fenced):
    target = fenced.project.parent / "background-wrote"
    _result, _text = await fenced.run_in(READ_ONLY, "true")
    context = fenced.context().replace(tool_use_id="toolu_bg", sandbox=READ_ONLY)
    from core.tools.bash import Bash

    tool = Bash()
    started = await tool.call(
        tool.parse_input({"command": f"echo x > {target}; echo done", "run_in_background": True}),
        context,
        lambda _: None,
    )
    shell = next(iter(shell_session(context).shells.values()))
    assert started.data.sandbox == "read-only"
    assert await shell.wait(30)
    assert not target.exists()
    assert "Read-only file system" in shell.spool.read_text()


async def test_the_sandbox_works_nested_inside_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """proctor run inside a sandbox (another proctor's, or a container's) still fences."""
    settings = SandboxSettings(allow_read=(str(ROOT),))
    fenced = make_fenced(tmp_path, monkeypatch, settings=settings)
    target = fenced.project.parent / "nested-wrote"
    script = (
        "import asyncio, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from core.sandbox.support import probe\n"
        "support = probe()\n"
        "print('nested:', support.available, support.namespaces, support.problem)\n"
        "from core.sandbox.fence import FenceBuilder, FenceInputs\n"
        "from core.access.sandbox_policy import ReadOnly\n"
        "import subprocess, pathlib\n"
        "here = FenceInputs(pathlib.Path('.').resolve())\n"
        "fence = FenceBuilder(support).build(ReadOnly('t'), here, None)\n"
        f"subprocess.run(['bash', '-c', 'echo x > {target}'], preexec_fn=fence.child.apply)\n"
    )
    (fenced.project / "nested.py").write_text(script)
    _result, text = await fenced.run_in(WORKSPACE, f"{sys.executable} nested.py")
    assert "nested: True" in text, text
    assert not target.exists()


async def test_a_fence_that_cannot_be_built_runs_nothing(fenced: Fenced, monkeypatch):
    from core.sandbox import kernel

    marker = fenced.project / "ran"

    def broken(self: kernel.ChildFence) -> None:
        import os as _os

        _os.write(1, kernel.SETUP_FAILED_MARK + b"applying the Landlock ruleset: test\n")
        _os._exit(kernel.SETUP_FAILED_EXIT)

    monkeypatch.setattr(kernel.ChildFence, "apply", broken)
    result, text = await fenced.run_in(READ_ONLY, f"touch {marker}")
    assert result.is_error
    assert "The sandbox could not be set up (applying the Landlock ruleset: test)" in text
    assert not marker.exists()


# -- carve-outs that are easy to get wrong ------------------------------------------------


async def test_a_symlink_in_the_project_does_not_reach_a_secret(fenced: Fenced):
    (fenced.project / "key").symlink_to(fenced.home / ".ssh" / "id_rsa")
    (fenced.project / "homedir").symlink_to(fenced.home)
    for policy in (READ_ONLY, WORKSPACE):
        _, text = await fenced.run_in(policy, "cat key; cat homedir/notes.txt; grep -rL x .")
        assert "CANARY" not in text, text


async def test_hooks_in_a_configured_hooks_path_cannot_be_planted(fenced: Fenced):
    hooks = fenced.project / "scripts" / "hooks"
    hooks.mkdir(parents=True)
    config = fenced.project / ".git" / "config"
    config.write_text("[core]\n\thooksPath = scripts/hooks\n")
    _, text = await fenced.run_in(WORKSPACE, "echo evil > scripts/hooks/pre-commit")
    assert not exists(hooks / "pre-commit")
    assert "sandbox probably stopped it" in text


async def test_a_nested_repository_keeps_its_configuration(fenced: Fenced):
    nested = fenced.project / "vendor" / "lib" / ".git"
    (nested / "hooks").mkdir(parents=True)
    (nested / "config").write_text("[core]\n")
    command = (
        "echo '[core] fsmonitor = evil' >> vendor/lib/.git/config; touch vendor/lib/.git/hooks/x"
    )
    await fenced.run_in(WORKSPACE, command)
    assert (nested / "config").read_text() == "[core]\n"
    assert not exists(nested / "hooks" / "x")


@needs_namespaces
async def test_a_denied_directory_is_covered_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    fenced = make_fenced(tmp_path, monkeypatch, rules=("deny Read(./secrets/**)",))
    secrets = fenced.project / "secrets" / "deep"
    secrets.mkdir(parents=True)
    for n in range(50):
        (secrets / f"s{n}.txt").write_text("CANARY-SECRET-DIR\n")
    for policy in (READ_ONLY, WORKSPACE):
        _, text = await fenced.run_in(policy, "grep -r CANARY-SECRET . ; cat secrets/deep/s1.txt")
        assert "CANARY" not in text, text
    fence = fenced.sandbox.fence(READ_ONLY, fenced.context().permission_context, None)
    try:
        masked = [m.target for m in fence.child.mounts if m.source.endswith("denied-dir")]
        assert str(fenced.project / "secrets") in masked
        assert not any("s1.txt" in target for target in masked)
    finally:
        fence.finish()


async def test_a_deny_pattern_anchored_at_the_root_still_covers_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    fenced = make_fenced(tmp_path, monkeypatch, rules=("deny Read(//**/*.pem)",))
    (fenced.project / "src" / "server.pem").write_text("CANARY-PEM\n")
    _, text = await fenced.run_in(READ_ONLY, "cat src/server.pem; grep -r CANARY-PEM src")
    assert "CANARY" not in text, text


async def test_settings_deny_read_paths_are_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    settings = SandboxSettings(deny_read=("config/prod.yaml",))
    fenced = make_fenced(tmp_path, monkeypatch, settings=settings)
    (fenced.project / "config").mkdir()
    (fenced.project / "config" / "prod.yaml").write_text("password: CANARY-PROD\n")
    _, text = await fenced.run_in(READ_ONLY, "cat config/prod.yaml; grep -r CANARY-PROD .")
    assert "CANARY-PROD" not in text, text


async def test_a_project_too_large_to_search_runs_nothing(
    fenced: Fenced, monkeypatch: pytest.MonkeyPatch
):
    from core.sandbox import fence as fence_module

    monkeypatch.setattr(fence_module, "_WALK_LIMIT", 3)
    for n in range(10):
        (fenced.project / f"f{n}").write_text("x")
    outcome, text = await fenced.run("cat f1")
    assert outcome.is_error
    assert "narrow the rules" in text
    assert outcome.sandbox == "read-only"


async def test_a_working_directory_under_a_carve_out_sees_the_carve_out(fenced: Fenced):
    """The child enters its directory before the mounts are made; relative paths from
    there must still meet them (`cd .git/hooks`, then a relative write)."""
    hooks = fenced.project / ".git" / "hooks"
    context = fenced.context()
    session = shell_session(context)
    session.cwd = hooks
    _, text = await fenced.run_in(WORKSPACE, "echo evil > pre-commit")
    assert not exists(hooks / "pre-commit"), text
    session.cwd = fenced.project
    _, text = await fenced.run_in(READ_ONLY, "cat .env")
    assert "CANARY" not in text


async def test_a_sandboxed_command_that_times_out_is_stopped(fenced: Fenced):
    outcome, text = await fenced.run("sleep 30", timeout=500)
    assert outcome.is_error and "timed out" in text
    assert outcome.sandbox == "read-only"


async def test_a_denied_file_inside_a_protected_directory_stays_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The protected directory is bound read-only after the mask is made inside it: the
    bind must carry the mask along."""
    fenced = make_fenced(tmp_path, monkeypatch, rules=("deny Read(.claude/token)",))
    (fenced.project / ".claude").mkdir()
    (fenced.project / ".claude" / "token").write_text("CANARY-TOKEN\n")
    _, text = await fenced.run_in(WORKSPACE, "cat .claude/token")
    assert "CANARY" not in text, text


# -- no capability survives, in either way of building the fence ---------------------------


@pytest.mark.parametrize("policy", POLICIES)
async def test_no_capability_survives_into_the_command(fenced: Fenced, policy: SandboxPolicy):
    """Root keeps no capability either (CI runs as root): no module loading, no raw disks,
    no mounts, even where Landlock would not see it."""
    _, text = await fenced.run_in(policy, "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status")
    lines = [line.split() for line in text.splitlines() if line.startswith("Cap")]
    assert len(lines) == 5, text
    assert all(int(value, 16) == 0 for _, value in lines), text


LANDLOCK_ONLY = SandboxSupport(
    landlock_abi=SUPPORT.landlock_abi, namespaces=False, seccomp=SUPPORT.seccomp, problem=None
)


@pytest.fixture
def landlock_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fenced:
    """The fence as it is built where user namespaces are forbidden: Landlock and seccomp
    alone, carve-outs by granting around them."""
    return make_fenced(tmp_path, monkeypatch, rules=("deny Read(.env)",), support=LANDLOCK_ONLY)


@needs_seccomp
@pytest.mark.parametrize("policy", POLICIES)
async def test_without_namespaces_the_fence_still_holds(
    landlock_only: Fenced, policy: SandboxPolicy, listeners: Listeners
):
    fenced = landlock_only
    outside = fenced.project.parent / "written-outside"
    tcp = listeners.tcp.getsockname()[1]
    udp = listeners.udp.getsockname()[1]
    commands = [
        f"touch {outside}",
        "cat $HOME/.ssh/id_rsa",
        "grep -r CANARY .",
        "echo evil >> .git/config",
        "touch .git/hooks/pre-commit",
        f"echo x > /dev/tcp/127.0.0.1/{tcp}",
        f"echo x > /dev/udp/127.0.0.1/{udp}",
        "grep -E '^Cap(Prm|Eff|Bnd):' /proc/self/status",
    ]
    for command in commands:
        _, text = await fenced.run_in(policy, command)
        assert "CANARY" not in text, f"{command}:\n{text}"
        if command.startswith("grep -E"):
            assert all(line.split()[1].strip("0") == "" for line in text.splitlines()), text
    assert not exists(outside)
    assert (fenced.project / ".git" / "config").read_text() == "[core]\n"
    assert not exists(fenced.project / ".git" / "hooks" / "pre-commit")
    assert not listeners.connected() and not listeners.received()


async def test_without_namespaces_the_workspace_writes_below_the_top(landlock_only: Fenced):
    fenced = landlock_only
    result, text = await fenced.run_in(WORKSPACE, "echo ok > src/new.py && cat src/new.py")
    assert not result.is_error, text
    _, text = await fenced.run_in(WORKSPACE, "mkdir .proctor")
    assert not exists(fenced.project / ".proctor")
    assert "sandbox probably stopped it" in text


async def test_read_only_git_runs_none_of_the_repositorys_programs(fenced: Fenced):
    """Even a program that only prints: the repository's configuration is not obeyed."""
    target = fenced.project / "pager-ran"
    repository_running(fenced.project, "echo FSMONITOR-RAN >&2")
    config = fenced.project / ".git" / "config"
    config.write_text(config.read_text() + f"\tpager = touch {target}; cat\n")
    (fenced.project / "f").write_text("x")
    _, text = await fenced.run_in(READ_ONLY, "git status && git -P log; git diff")
    assert "FSMONITOR-RAN" not in text
    _, text = await fenced.run_in(WORKSPACE, "git status")
    assert "FSMONITOR-RAN" in text  # the workspace obeys the repository, fenced


# -- channels beside files and sockets ------------------------------------------------------

SYSV = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Msg(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 32)]
message = Msg(1, b"EXFIL-SYSV")
print("msgsnd", libc.msgsnd(int(sys.argv[1]), ctypes.byref(message), 32, 0))
"""

KEYRING = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
number = 250 if os.uname().machine == "x86_64" else 219
found = libc.syscall(number, 10, -3, b"user", b"proctor-test-canary", 0)  # KEYCTL_SEARCH
print("keyctl", found, os.strerror(ctypes.get_errno()))
"""

DATAGRAM = """
import socket, sys
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendto(b"EXFIL-DGRAM", sys.argv[1])
    print("sent")
except OSError as error:
    print("refused", error)
"""


@pytest.mark.parametrize("policy", POLICIES)
async def test_a_datagram_socket_pair_cannot_reach_a_named_socket(
    fenced: Fenced, policy: SandboxPolicy, tmp_path: Path
):
    path = tmp_path / "journal.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(path))
    listener.setblocking(False)
    try:
        (fenced.project / "dgram.py").write_text(DATAGRAM)
        _, text = await fenced.run_in(policy, f"python3 dgram.py {path}")
        assert "refused" in text, text
        with pytest.raises(BlockingIOError):
            listener.recv(100)
    finally:
        listener.close()


@pytest.mark.parametrize("policy", POLICIES)
async def test_host_message_queues_are_out_of_reach(fenced: Fenced, policy: SandboxPolicy):
    queue = make_message_queue()
    try:
        (fenced.project / "sysv.py").write_text(SYSV)
        _, text = await fenced.run_in(policy, f"python3 sysv.py {queue}")
        assert "msgsnd -1" in text, text
        assert receive_message(queue) is None
    finally:
        remove_message_queue(queue)


@pytest.mark.parametrize("policy", POLICIES)
async def test_the_keyring_is_out_of_reach(fenced: Fenced, policy: SandboxPolicy):
    (fenced.project / "keys.py").write_text(KEYRING)
    _, text = await fenced.run_in(policy, "python3 keys.py")
    assert "keyctl -1 Operation not permitted" in text, text


async def test_read_only_changes_no_file_metadata_anywhere(fenced: Fenced):
    outside = fenced.project.parent / "outside.txt"
    before = outside.stat()
    command = (
        f"chmod 4777 {outside}; touch -m -d 2001-01-01 {outside}; chmod 777 $HOME; "
        "chmod 666 src/app.py; "
        f"python3 -c \"import os; os.setxattr('{outside}', 'user.x', b'1')\""
    )
    _, text = await fenced.run_in(READ_ONLY, command)
    after = outside.stat()
    assert (after.st_mode, after.st_mtime_ns) == (before.st_mode, before.st_mtime_ns), text
    assert oct(fenced.home.stat().st_mode & 0o777) != "0o777"
    assert oct((fenced.project / "src" / "app.py").stat().st_mode & 0o777) != "0o666"


@needs_namespaces
async def test_the_workspace_changes_no_metadata_outside_the_project(fenced: Fenced):
    outside = fenced.project.parent / "outside.txt"
    before = outside.stat()
    await fenced.run_in(WORKSPACE, f"chmod 4777 {outside}; touch -m -d 2001-01-01 {outside}")
    after = outside.stat()
    assert (after.st_mode, after.st_mtime_ns) == (before.st_mode, before.st_mtime_ns)
    result, text = await fenced.run_in(WORKSPACE, "chmod +x src/app.py && test -x src/app.py")
    assert not result.is_error, text


# -- from a review that attacked the first version -----------------------------------------


@needs_namespaces
@pytest.mark.parametrize(
    "command",
    [
        "mv .git .git-old && cp -r .git-old .git && rm -rf .git/config && "
        "printf '[core]\\n\\tfsmonitor = evil\\n' > .git/config",
        "cp -r .git evilgit && printf '[core]\\n\\tfsmonitor = evil\\n' > evilgit/config && "
        "echo ../evilgit > .git/commondir",
    ],
)
async def test_git_configuration_cannot_be_swapped_by_renaming_or_redirecting(
    fenced: Fenced, command: str
):
    await fenced.run_in(WORKSPACE, command)
    assert (fenced.project / ".git" / "config").read_text() == "[core]\n"
    assert not exists(fenced.project / ".git" / "commondir")


@needs_namespaces
async def test_a_hooks_path_from_the_users_git_configuration_is_protected(fenced: Fenced):
    config = fenced.home / ".config" / "git" / "config"
    config.parent.mkdir(parents=True)
    config.write_text("[core]\n\thooksPath = .githooks\n")
    (fenced.project / ".githooks").mkdir()
    await fenced.run_in(
        WORKSPACE, "echo evil > .githooks/pre-commit; mv .githooks x; mkdir .githooks"
    )
    assert not exists(fenced.project / ".githooks" / "pre-commit")
    assert (fenced.project / ".githooks").is_dir() and not exists(fenced.project / "x")


@needs_namespaces
async def test_a_nested_repository_without_hooks_gets_none_planted(fenced: Fenced):
    nested = fenced.project / "vendor" / "lib" / ".git"
    nested.mkdir(parents=True)
    (nested / "config").write_text("[core]\n")
    _, text = await fenced.run_in(
        WORKSPACE, "mkdir -p vendor/lib/.git/hooks && touch vendor/lib/.git/hooks/post-checkout"
    )
    assert not exists(nested / "hooks"), text
    assert "moved to" in text


@pytest.mark.parametrize("policy", POLICIES)
async def test_git_credentials_and_secret_looking_variables_stay_hidden(
    fenced: Fenced, policy: SandboxPolicy, monkeypatch: pytest.MonkeyPatch
):
    credentials = fenced.home / ".config" / "git" / "credentials"
    credentials.parent.mkdir(parents=True, exist_ok=True)
    credentials.write_text("https://user:CANARY-CRED@example.com\n")
    monkeypatch.setenv("DATABASE_URL", "postgres://app:CANARY-DB@db/app")
    monkeypatch.setenv("SENTRY_DSN", "CANARY-DSN")
    monkeypatch.setenv("GITHUB_PAT", "CANARY-PAT")
    _, text = await fenced.run_in(policy, f"cat {credentials}; env")
    assert "CANARY" not in text, text


@needs_namespaces
async def test_the_masks_themselves_cannot_be_written(fenced: Fenced):
    await fenced.run_in(WORKSPACE, "chmod 666 .env; echo PLANTED > .env")
    _, text = await fenced.run_in(READ_ONLY, "cat .env")
    assert "PLANTED" not in text
    assert (fenced.project / ".env").read_text() == "API_KEY=CANARY-DOTENV\n"


@needs_namespaces
@pytest.mark.parametrize(
    "leftover",
    ["(sleep 60; mkdir .proctor) & echo $! > pid.txt",
     "setsid sh -c 'echo $$ > pid.txt; sleep 60; mkdir .proctor' &"
     " until [ -s pid.txt ]; do sleep 0.01; done"],
)  # fmt: skip
async def test_processes_left_behind_end_with_the_command(fenced: Fenced, leftover: str):
    """Else one could create a protected path after the check that moves such paths away."""
    _result, text = await fenced.run_in(WORKSPACE, leftover)
    pid = int((fenced.project / "pid.txt").read_text().split()[0])
    assert not alive(pid), text


async def test_deny_rules_reach_into_dot_git_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    fenced = make_fenced(tmp_path, monkeypatch, rules=("deny Read(.env)", "deny Read(.git/config)"))
    hidden = fenced.project / "hide" / ".git" / "app"
    hidden.mkdir(parents=True)
    (hidden / ".env").write_text("CANARY-NESTED\n")
    (fenced.project / ".git" / "config").write_text("[remote]\n\turl = https://x:CANARY-TOKEN@h\n")
    _, text = await fenced.run_in(READ_ONLY, "cat hide/.git/app/.env .git/config")
    assert "CANARY" not in text, text


async def test_a_directory_whose_mtime_is_set_back_is_searched_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    fenced = make_fenced(tmp_path, monkeypatch, rules=("deny Read(.env)",))
    stash = fenced.project / "d"
    stash.mkdir()
    await fenced.run_in(READ_ONLY, "true")  # the listings are cached now
    moved = fenced.project / "app"
    moved.mkdir()
    (moved / ".env").write_text("CANARY-MTIME\n")
    before = stash.stat()
    moved.rename(stash / "app")
    os.utime(stash, ns=(before.st_atime_ns, before.st_mtime_ns))
    _, text = await fenced.run_in(READ_ONLY, "cat d/app/.env")
    assert "CANARY" not in text, text


def test_files_not_everyone_may_read_are_found_for_hiding(tmp_path: Path):
    from core.sandbox.fence import DirectoryIndex

    (tmp_path / "open.conf").write_text("x")
    (tmp_path / "private.key").write_text("x")
    (tmp_path / "private.key").chmod(0o600)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "token").write_text("x")
    (tmp_path / "sub" / "token").chmod(0o640)
    found = sorted(DirectoryIndex().private(str(tmp_path)))
    assert found == [str(tmp_path / "private.key"), str(tmp_path / "sub" / "token")]


@needs_namespaces
async def test_a_tree_too_deep_to_open_by_path_breaks_nothing(fenced: Fenced):
    deep = "a/" * 1500
    result, text = await fenced.run_in(
        WORKSPACE, f"(mkdir -p {deep[:3000]} && cd {deep[:3000]} && mkdir -p {deep[:1600]})"
    )
    result, text = await fenced.run_in(READ_ONLY, "cat src/app.py")
    remove_tree(fenced.project / "a")  # too deep for Python's own rmtree
    assert not result.is_error, text
