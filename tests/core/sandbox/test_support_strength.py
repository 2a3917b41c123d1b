"""What the status bar says the sandbox holds back, for each kind of kernel the probe can find.

Only the strongest kernel runs here, so the weaker answers are checked from the support the
probe would report on such a kernel (a mutation run found them untested).
"""

from __future__ import annotations

import pytest

from core.sandbox.support import SandboxSupport


@pytest.mark.parametrize(
    ("support", "said"),
    [
        (SandboxSupport(problem="this kernel has no Landlock (Linux 5.13+, enabled)"), "off"),
        (SandboxSupport(6, namespaces=True, seccomp=True, problem=None), "files+net"),
        (SandboxSupport(6, namespaces=False, seccomp=True, problem=None), "files+net"),
        (SandboxSupport(6, namespaces=True, seccomp=False, problem=None), "files+net"),
        (SandboxSupport(4, problem=None), "files+tcp (no UDP isolation here)"),
        (SandboxSupport(3, problem=None), "files only (no network isolation here)"),
    ],
)
def test_the_status_bar_names_what_this_kernel_fences(support: SandboxSupport, said: str):
    assert support.strength() == said


def test_an_unprobed_sandbox_is_not_available():
    assert not SandboxSupport().available
    assert SandboxSupport().strength() == "off"
