"""A session's services: found by key, shared by every copy of the context, closed users first."""

from __future__ import annotations

import pytest

from core.permissions.session_sandbox import SANDBOX
from core.session_services import ServiceKey, SessionServices
from core.tools.shells.session import SHELLS
from core.tools.task import SUBAGENTS


class Recorded:
    def __init__(self, name: str, closed: list[str], fails: bool = False) -> None:
        self.name, self.closed, self.fails = name, closed, fails

    async def close(self) -> None:
        self.closed.append(self.name)
        if self.fails:
            raise RuntimeError("would not close")


def test_the_session_s_own_keys_close_its_users_first():
    """Sub-agents run commands in shells that run in the sandbox: they close in that order."""
    assert SUBAGENTS.close_stage < SHELLS.close_stage < SANDBOX.close_stage


async def test_closing_goes_by_stage_and_each_service_is_still_found_while_others_close(
    caplog: pytest.LogCaptureFixture,
):
    closed: list[str] = []
    agents_key = ServiceKey[object]("agents", close_stage=0)
    shells_key = ServiceKey[Recorded]("shells", close_stage=1)
    sandbox_key = ServiceKey[Recorded]("sandbox", close_stage=2)
    services = SessionServices()
    seen_while_closing: list[object] = []

    class Agents(Recorded):
        async def close(self) -> None:
            # An agent winding down still reaches the session's own shells.
            seen_while_closing.append(
                services.setdefault(shells_key, lambda: Recorded("new", closed))
            )
            await super().close()

    services.provide(sandbox_key, Recorded("sandbox", closed, fails=True))
    services.provide(agents_key, Agents("agents", closed))
    shells = services.setdefault(shells_key, lambda: Recorded("shells", closed))  # made last
    await services.close()
    assert closed == ["agents", "shells", "sandbox"]
    assert seen_while_closing == [shells]
    assert "closing the session's sandbox failed" in caplog.text
    assert services.get(shells_key) is None  # all forgotten once closed
