"""A file or directory the process cannot read, also when the tests run as root.

Root reads everything whatever the mode, and CI runs as root: there `chmod 0` alone locks
nothing, and the tests of what proctor says about an unreadable path never ran. `locked`
takes every permission away (what an ordinary user then meets, for real) and, as root only,
makes the calls through which code reaches the kernel answer as they do for anyone else on
such a path: `os.access` says no; `open`, `io.open` (under `Path.read_bytes` and friends),
`os.open`, `os.scandir` and `os.listdir` raise PermissionError (EACCES). Inside a locked
directory everything is locked too. The code under test is not touched, only the answers it
gets, so a check removed or an error left uncaught fails the test under either user.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


@contextmanager
def locked(path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    mode = path.stat().st_mode & 0o777
    path.chmod(0)
    try:
        if os.geteuid() == 0:
            with monkeypatch.context() as patch:
                _answer_as_for_anyone(Path(os.path.abspath(path)), patch)
                yield
        else:
            yield
    finally:
        path.chmod(mode)


def _answer_as_for_anyone(root: Path, patch: pytest.MonkeyPatch) -> None:
    def covered(target: Any) -> bool:
        if isinstance(target, int):
            return False  # an open file descriptor: it was opened before the lock
        where = Path(os.path.abspath(os.fsdecode(target)))
        return where == root or root in where.parents

    def denied(target: Any) -> PermissionError:
        return PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(target))

    def refusing(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(target: Any = ".", *args: Any, **kwargs: Any) -> Any:
            if covered(target):
                raise denied(target)
            return real(target, *args, **kwargs)

        return call

    real_access = os.access

    def access(target: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        if covered(target) and mode != os.F_OK:
            return False
        return real_access(target, mode, *args, **kwargs)

    patch.setattr(os, "access", access)
    patch.setattr(builtins, "open", refusing(builtins.open))
    patch.setattr(io, "open", refusing(io.open))
    patch.setattr(os, "open", refusing(os.open))
    patch.setattr(os, "scandir", refusing(os.scandir))
    patch.setattr(os, "listdir", refusing(os.listdir))
