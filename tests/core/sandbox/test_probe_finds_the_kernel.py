"""Where the kernel offers a sandbox, the probe must find it.

Every escape test (test_escapes.py) skips on a machine whose probe found no sandbox, which
is right on a machine without one and wrong on one that has it: a fence broken in our own
code (the mutation run removed `PR_SET_NO_NEW_PRIVS`) made the probe fail, every escape test
skip, and the suite stay green. So this asks the kernel itself, without our code: Landlock's
ABI straight from the syscall, user namespaces from util-linux's `unshare`. Where the kernel
says yes, the probe must have built and run a fence with them."""

from __future__ import annotations

import ctypes
import platform
import shutil
import subprocess
import sys

import pytest

from core.sandbox.support import probe

# landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) answers the ABI version;
# its number is 444 on x86_64 and aarch64 alike.
_LANDLOCK_CREATE_RULESET = 444
_VERSION = 1


def kernel_landlock_abi() -> int:
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "aarch64"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    answer = libc.syscall(
        ctypes.c_long(_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION)
    )
    return max(int(answer), 0)


def kernel_allows_user_namespaces() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    done = subprocess.run([unshare, "-Urn", "true"], capture_output=True, check=False, timeout=30)
    return done.returncode == 0


def test_where_the_kernel_has_landlock_the_probe_builds_a_fence_with_it():
    abi = kernel_landlock_abi()
    if abi < 1:
        pytest.skip("this kernel has no Landlock: nothing for the probe to find")
    support = probe()
    assert support.available, f"the kernel offers Landlock ABI {abi}, the probe: {support.problem}"
    assert support.landlock_abi == abi


def test_where_the_kernel_allows_user_namespaces_the_probe_uses_them():
    if kernel_landlock_abi() < 1 or not kernel_allows_user_namespaces():
        pytest.skip("no Landlock or no unprivileged user and network namespaces here")
    support = probe()
    assert support.available and support.namespaces, support
    assert support.strength() == "files+net"
