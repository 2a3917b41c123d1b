"""What this kernel offers the sandbox, found once at start by trying it.

The probe does not read version numbers and guess: it builds a real fence (Landlock, the
namespaces, seccomp) around `/bin/true` and runs it, first with namespaces, then without. So
what the status bar says the sandbox can do is what a command actually got a moment ago.
It costs a fork and an exec (a few milliseconds) and runs on a thread, off the first frame.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass

from . import kernel


@dataclass(frozen=True, slots=True)
class SandboxSupport:
    landlock_abi: int = 0
    namespaces: bool = False
    """User, mount and network namespaces: a private network and exact carve-outs."""
    seccomp: bool = False
    problem: str | None = "not probed"
    """Why there is no sandbox here; None when there is one."""
    probe_ms: float = 0.0

    @property
    def available(self) -> bool:
        return self.problem is None

    def strength(self) -> str:
        """In a few words, for the status bar: what the fence holds back here."""
        if not self.available:
            return "off"
        if self.namespaces or self.seccomp:
            return "files+net"
        if self.landlock_abi >= 4:
            return "files+tcp (no UDP isolation here)"
        return "files only (no network isolation here)"


UNPROBED = SandboxSupport()


def probe() -> SandboxSupport:
    """Try the strongest fence this kernel can give, then weaker ones."""
    started = time.perf_counter()
    support = _probe()
    elapsed = (time.perf_counter() - started) * 1000
    return SandboxSupport(
        support.landlock_abi, support.namespaces, support.seccomp, support.problem, elapsed
    )


def _probe() -> SandboxSupport:
    if not sys.platform.startswith("linux"):
        return SandboxSupport(problem=f"there is no kernel sandbox for {sys.platform} yet")
    if not kernel.SUPPORTED_ARCH or kernel.LIBC is None:
        return SandboxSupport(problem=f"the sandbox does not support {kernel._ARCH} yet")
    abi = kernel.landlock_abi()
    if abi < 1:
        return SandboxSupport(problem="this kernel has no Landlock (Linux 5.13+, enabled)")
    failure = ""
    for namespaces, seccomp in ((True, True), (False, True), (False, False)):
        failure = _try(abi, namespaces=namespaces, seccomp=seccomp)
        if not failure:
            return SandboxSupport(abi, namespaces, seccomp, None)
    return SandboxSupport(abi, problem=f"the sandbox could not be applied here ({failure})")


def _try(abi: int, *, namespaces: bool, seccomp: bool) -> str:
    """Run /bin/true inside such a fence; "" when it worked, else what failed."""
    try:
        ruleset = kernel.Ruleset(abi, handle_net=not namespaces)
    except OSError as error:
        return str(error)
    try:
        for root in ("/usr", "/bin", "/lib", "/lib64"):
            ruleset.allow(root, kernel.READ_RIGHTS)
        fence = kernel.ChildFence(
            uid=os.getuid(),
            gid=os.getgid(),
            namespaces=namespaces,
            mounts=[],
            ruleset_fd=ruleset.fd,
            seccomp=kernel.seccomp_program(frozenset()) if seccomp else b"",
        )
        true = "/bin/true" if os.path.exists("/bin/true") else "/usr/bin/true"
        result = subprocess.run(
            [true], preexec_fn=fence.apply, capture_output=True, check=False, timeout=10
        )
    except (OSError, subprocess.SubprocessError) as error:
        return str(error)
    finally:
        ruleset.close()
    if result.returncode == 0:
        return ""
    text = result.stdout.decode("utf-8", "replace").strip()
    return text.removeprefix(kernel.SETUP_FAILED_MARK.decode()) or f"exit {result.returncode}"
