"""The kernel's side of the sandbox: Landlock, namespaces, capabilities and seccomp via ctypes.

Why it is shaped this way:

- Nothing to install. Python 3.11 has no `os.unshare` and no Landlock binding, so the few
  system calls are made through `ctypes` on the C library's `syscall`; numbers are the same
  on x86_64 and aarch64 for Landlock (444-446) and differ for the rest (`_ARCH`).
- Work is split between parent and child. Everything that allocates, opens files or may
  fail for a reason worth a message (the Landlock ruleset, the seccomp program, the mounts
  to make) is prepared in the parent; the child, between `fork` and `exec`, only makes the
  calls, in an order that keeps each step possible: namespaces and mounts first (they need
  the capabilities the new user namespace gives), then every capability dropped, then
  no_new_privs, Landlock, and seccomp last (it may refuse calls the earlier steps make).
- A child that cannot apply a step writes one line saying which and why to its output (the
  spool the tool reads) and exits with `SETUP_FAILED_EXIT` before bash ever runs: a fence
  that cannot be built never becomes a command run without it.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import socket
import stat
import struct
from dataclasses import dataclass
from typing import Literal

SETUP_FAILED_EXIT = 125
SETUP_FAILED_MARK = b"proctor-sandbox-setup-failed: "

# -- system call numbers ------------------------------------------------------------------

_ARCH = platform.machine()
_X86_64 = _ARCH in ("x86_64", "AMD64")
_AARCH64 = _ARCH in ("aarch64", "arm64")
SUPPORTED_ARCH = _X86_64 or _AARCH64

SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
SYS_SECCOMP = 317 if _X86_64 else 277
SYS_SOCKET = 41 if _X86_64 else 198
SYS_MOUNT_SETATTR = 442
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 1
_MOUNT_ATTR_SIZE = 32
SYS_IO_URING = (425, 426, 427)
AUDIT_ARCH = 0xC000003E if _X86_64 else 0xC00000B7  # AUDIT_ARCH_X86_64 / AUDIT_ARCH_AARCH64

# -- Landlock -------------------------------------------------------------------------------

LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5

NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1

SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

FILE_ONLY_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
READ_RIGHTS = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR


def fs_rights_for(abi: int) -> int:
    """Every file-system right this Landlock ABI knows (all are handled, so all are denied
    unless a rule grants them)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


# -- namespaces, mounts, capabilities --------------------------------------------------------

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21

# statvfs f_flag bits, which a read-only remount must keep (the kernel locks them).
_ST_TO_MS = ((1, MS_RDONLY), (2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC))
_ST_TO_MS_TIME = ((1024, MS_NOATIME), (2048, MS_NODIRATIME), (4096, MS_RELATIME))

PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

SECCOMP_SET_MODE_FILTER = 1

_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


def _libc() -> ctypes.CDLL | None:
    try:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.syscall.restype = ctypes.c_long
        return lib
    except (OSError, AttributeError):
        return None


LIBC = _libc()


class KernelError(OSError):
    """A system call failed; the message says which and why."""


def _fail(what: str) -> KernelError:
    code = ctypes.get_errno()
    return KernelError(code, f"{what}: {os.strerror(code)}")


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers, 0 when it has none."""
    if LIBC is None or not SUPPORTED_ARCH:
        return 0
    version = LIBC.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    return max(int(version), 0)


@dataclass(slots=True)
class Ruleset:
    """A Landlock ruleset being built in the parent: an fd the child restricts itself with."""

    abi: int
    handle_net: bool
    fd: int = -1
    handled_fs: int = 0

    def __post_init__(self) -> None:
        assert LIBC is not None
        handled_fs = fs_rights_for(self.abi)
        handled_net = NET_BIND_TCP | NET_CONNECT_TCP if self.handle_net and self.abi >= 4 else 0
        scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if self.abi >= 6 else 0
        if self.abi >= 6:
            attr = struct.pack("QQQ", handled_fs, handled_net, scoped)
        elif self.abi >= 4:
            attr = struct.pack("QQ", handled_fs, handled_net)
        else:
            attr = struct.pack("Q", handled_fs)
        buffer = ctypes.create_string_buffer(attr, len(attr))
        fd = LIBC.syscall(SYS_LANDLOCK_CREATE_RULESET, buffer, len(attr), 0)
        if fd < 0:
            raise _fail("creating the Landlock ruleset")
        self.fd = int(fd)
        self.handled_fs = handled_fs

    def allow(self, path: str, rights: int) -> bool:
        """Grant `rights` beneath `path` (only file rights when it is not a directory).
        False when the path does not exist: nothing to grant."""
        assert LIBC is not None
        try:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            if not _is_dir_fd(target):
                rights &= FILE_ONLY_RIGHTS
            rights &= self.handled_fs
            if not rights:
                return True
            attr = struct.pack("=Qi", rights, target)
            buffer = ctypes.create_string_buffer(attr, len(attr))
            if LIBC.syscall(SYS_LANDLOCK_ADD_RULE, self.fd, LANDLOCK_RULE_PATH_BENEATH, buffer, 0):
                raise _fail(f"granting access to {path}")
            return True
        finally:
            os.close(target)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _is_dir_fd(fd: int) -> bool:
    return stat.S_ISDIR(os.fstat(fd).st_mode)


# -- seccomp ----------------------------------------------------------------------------------

_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_RET_K = 0x06
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_X32_SYSCALL_BIT = 0x40000000
_JGE_K = 0x35


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


# Calls refused with EPERM in every sandbox: the kernel keyring (a session keyring is
# inherited, and may hold credentials), and io_uring (its requests bypass the socket check).
_KEYRING = (248, 249, 250) if _X86_64 else (217, 218, 219)
# SysV and POSIX message queues and shared memory: shared with the host unless there is an
# IPC namespace, so refused when there is none.
_IPC = (
    (29, 30, 31, 64, 65, 66, 67, 68, 69, 70, 71, 220, 240, 241, 242, 243, 244, 245)
    if _X86_64
    else (186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 180, 181, 182, 183, 184, 185)
)
# Changing a file's mode, owner, times or extended attributes: Landlock does not cover
# them, so a read-only sandbox refuses them outright.
_METADATA = (
    (90, 91, 92, 93, 94, 132, 235, 260, 261, 268, 280, 188, 189, 190, 197, 198, 199, 452, 463,
     466)
    if _X86_64
    else (5, 6, 7, 14, 15, 16, 52, 53, 54, 55, 88, 452, 463, 466)
)  # fmt: skip
SYS_SOCKETPAIR = 53 if _X86_64 else 199
_SOCK_STREAM = 1
_BPF_ALU_AND_K = 0x54


def seccomp_program(
    allowed_socket_families: frozenset[int], *, deny_ipc: bool = False, deny_metadata: bool = False
) -> bytes:
    """A filter refusing, with EPERM: `socket()` for every address family but the allowed
    ones; `socketpair()` but for stream pairs (a datagram pair can `sendto` any named
    socket); io_uring; the keyring; and, as asked, IPC and metadata changes. Calls from
    another ABI (32-bit programs, x32) are refused with ENOSYS: their numbers mean other
    things."""
    nr, arch, arg0, arg1 = 0, 4, 16, 24  # offsets in struct seccomp_data (low words: LE)
    deny = _insn(_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | errno.EPERM)
    allow = _insn(_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW)
    denied = [*SYS_IO_URING, *_KEYRING]
    if deny_ipc:
        denied += _IPC
    if deny_metadata:
        denied += _METADATA
    families = sorted(allowed_socket_families)
    prog = [
        _insn(_BPF_LD_W_ABS, 0, 0, arch),
        _insn(_BPF_JEQ_K, 1, 0, AUDIT_ARCH),
        _insn(_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | errno.ENOSYS),
        _insn(_BPF_LD_W_ABS, 0, 0, nr),
    ]
    if _X86_64:
        prog += [
            _insn(_JGE_K, 0, 1, _X32_SYSCALL_BIT),
            _insn(_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | errno.ENOSYS),
        ]
    for call in dict.fromkeys(denied):
        prog += [_insn(_BPF_JEQ_K, 0, 1, call), deny]
    # socketpair(): only SOCK_STREAM (the low 4 bits of the type; the rest are flags).
    prog += [
        _insn(_BPF_JEQ_K, 0, 5, SYS_SOCKETPAIR),
        _insn(_BPF_LD_W_ABS, 0, 0, arg1),
        _insn(_BPF_ALU_AND_K, 0, 0, 0xF),
        _insn(_BPF_JEQ_K, 0, 1, _SOCK_STREAM),
        allow,
        deny,
    ]
    # socket(): allow listed families, refuse the rest.
    prog += [_insn(_BPF_LD_W_ABS, 0, 0, nr), _insn(_BPF_JEQ_K, 0, 2 + len(families), SYS_SOCKET)]
    prog += [_insn(_BPF_LD_W_ABS, 0, 0, arg0)]
    for index, family in enumerate(families):
        remaining = len(families) - index - 1
        prog += [_insn(_BPF_JEQ_K, remaining + 1, 0, family)]
    prog += [deny, allow]
    return b"".join(prog)


# -- the child's side -------------------------------------------------------------------------


@dataclass(slots=True)
class Mount:
    """A bind mount to make in the child's mount namespace, after the whole tree has been
    made read-only: `writable` opens a tree for writing again (the project, the scratch
    directory), `read-only` covers a path (a mask, a protected path), `pin` only makes the
    path a mount point, which cannot be renamed or removed (the parents of protected
    paths: renaming `.git` would leave its protected `config` behind under another name)."""

    source: str
    target: str
    kind: Literal["writable", "read-only", "pin"]
    flags: int = 0
    """The target file system's flags, kept on a read-only remount (the kernel locks them)."""


def mount_flags(path: str) -> int:
    """The MS_* flags a read-only remount of a bind of `path` must carry."""
    flags = 0
    try:
        found = os.statvfs(path).f_flag
    except OSError:
        return flags
    for st, ms in (*_ST_TO_MS, *_ST_TO_MS_TIME):
        if found & st:
            flags |= ms
    return flags


class ChildFence:
    """What the child applies between fork and exec; built whole in the parent, so that the
    child allocates nothing it could fail to get (the buffers are made here)."""

    def __init__(
        self,
        *,
        uid: int,
        gid: int,
        namespaces: bool,
        mounts: list[Mount],
        ruleset_fd: int,
        seccomp: bytes,
    ) -> None:
        self.uid = uid
        self.gid = gid
        self.namespaces = namespaces
        self.mounts = mounts
        self.ruleset_fd = ruleset_fd
        self._seccomp = ctypes.create_string_buffer(seccomp, max(len(seccomp), 1))
        fprog = struct.pack("HxxxxxxQ", len(seccomp) // 8, ctypes.addressof(self._seccomp))
        self._fprog = ctypes.create_string_buffer(fprog, len(fprog)) if seccomp else None
        self._read_only = ctypes.create_string_buffer(
            struct.pack("QQQQ", MOUNT_ATTR_RDONLY, 0, 0, 0), _MOUNT_ATTR_SIZE
        )
        self._writable = ctypes.create_string_buffer(
            struct.pack("QQQQ", 0, MOUNT_ATTR_RDONLY, 0, 0), _MOUNT_ATTR_SIZE
        )
        header = struct.pack("Ii", _LINUX_CAPABILITY_VERSION_3, 0)
        self._cap_header = ctypes.create_string_buffer(header, len(header))
        self._cap_data = ctypes.create_string_buffer(bytes(24), 24)

    def apply(self) -> None:
        """Runs in the child, after fork, before exec (subprocess's `preexec_fn`)."""
        assert LIBC is not None
        step = "starting"
        try:
            if self.namespaces:
                step = "creating the user, mount, network and IPC namespaces"
                _check(LIBC.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC))
                step = "mapping the user and group ids"
                _write_proc("/proc/self/setgroups", b"deny")
                _write_proc("/proc/self/uid_map", b"%d %d 1" % (self.uid, self.uid))
                _write_proc("/proc/self/gid_map", b"%d %d 1" % (self.gid, self.gid))
                step = "making mounts private"
                _check(LIBC.mount(None, b"/", None, MS_REC | MS_PRIVATE, None))
                # Everything read-only first: Landlock does not cover a file's mode, owner,
                # times or attributes, a read-only mount does.
                step = "making every mount read-only"
                _check(LIBC.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, b"/", AT_RECURSIVE,
                                    self._read_only, _MOUNT_ATTR_SIZE))  # fmt: skip
                for mount in self.mounts:
                    step = f"binding {mount.target} ({mount.kind})"
                    target = os.fsencode(mount.target)
                    # Recursive: a mask already made inside a tree stays in the new bind.
                    source = os.fsencode(mount.source)
                    _check(LIBC.mount(source, target, None, MS_BIND | MS_REC, None))
                    if mount.kind == "writable":
                        _check(LIBC.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, target, AT_RECURSIVE,
                                            self._writable, _MOUNT_ATTR_SIZE))  # fmt: skip
                    elif mount.kind == "read-only":
                        flags = MS_BIND | MS_REMOUNT | MS_RDONLY | mount.flags
                        _check(LIBC.mount(None, target, None, flags, None))
                # The working directory was entered before the mounts were made, so it still
                # looks at what they cover: enter it again, through them.
                step = "entering the working directory again"
                os.chdir(os.getcwd())
                step = "bringing up the private loopback"
                _loopback_up()
            step = "dropping capabilities"
            _drop_capabilities(self._cap_header, self._cap_data)
            step = "setting no_new_privs"
            _check(LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
            if self.ruleset_fd >= 0:
                step = "applying the Landlock ruleset"
                _check(LIBC.syscall(SYS_LANDLOCK_RESTRICT_SELF, self.ruleset_fd, 0))
            if self._fprog is not None:
                step = "installing the seccomp filter"
                _check(LIBC.syscall(SYS_SECCOMP, SECCOMP_SET_MODE_FILTER, 0, self._fprog))
        except BaseException as error:
            detail = error.strerror if isinstance(error, OSError) and error.strerror else error
            message = SETUP_FAILED_MARK + f"{step}: {detail}\n".encode("utf-8", "replace")
            try:
                os.write(1, message)
            finally:
                os._exit(SETUP_FAILED_EXIT)


def _check(result: int) -> None:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def _write_proc(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _loopback_up() -> None:
    """The new network namespace has only `lo`, down: bring it up so a command's own local
    servers work (tests often start one). Nothing outside the namespace is reachable."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | _IFF_UP))


def _drop_capabilities(
    header: ctypes.Array[ctypes.c_char], data: ctypes.Array[ctypes.c_char]
) -> None:
    """No capability survives into the command, even for root: the bounding set is emptied
    (so exec cannot give root its capabilities back), then the ambient and current sets.
    Without CAP_SETPCAP (an ordinary user, no user namespace) there is nothing to drop."""
    assert LIBC is not None
    for capability in range(64):
        if LIBC.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) < 0:
            code = ctypes.get_errno()
            if code == errno.EINVAL:  # past the last capability this kernel knows
                break
            if code != errno.EPERM:
                raise OSError(code, os.strerror(code))
    LIBC.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    _check(LIBC.capset(header, data))
