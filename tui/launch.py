"""What the app is launched with, and the start-up work that is not drawing.

Why it is its own module: the app draws its first frame before the engine is loaded (see
tui/app.py), so what start-up needs from the engine is imported here, inside the function
that runs on a thread, and only types are imported at the top. `LaunchOptions` is what the
command line (tui/cli.py), tests and scripts hand the app.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.agent.live import PreparedSession
    from core.agent.model import ModelClient
    from core.agent.options import SessionOptions
    from core.permissions.session_sandbox import SessionSandbox


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    session: PreparedSession | SessionOptions
    """What to run: options (read and checked once the screen is up) or a prepared session."""
    theme: str | None = None
    trust: bool = False
    """--trust: trust the project without asking."""
    first_prompt: str | None = None
    """Sent as soon as the session is open."""
    play_demo: bool = False
    """Send the demo scenario's own prompt (unless carrying on a session)."""
    model: ModelClient | None = None
    """A model to use instead of the one settings name (tests)."""


def prepare(session: PreparedSession | SessionOptions) -> PreparedSession | str:
    """Runs on a thread: imports the engine and reads settings. A string says why the
    session cannot start (no such session to resume, a broken scenario)."""
    import anthropic  # noqa: F401

    import core.agent.demo  # noqa: F401
    from core.agent.live import PreparedSession, prepare_session
    from core.agent.scenario import ScenarioError
    from core.agent.sessions import SessionNotFound
    from core.settings.read import SettingsFileError

    if isinstance(session, PreparedSession):
        return session
    try:
        return prepare_session(session)
    except (ScenarioError, SessionNotFound, SettingsFileError) as error:
        return str(error)
    except OSError as error:  # the data directory cannot be written, say
        return f"the session cannot be set up: {error}"


def sandbox_missing(sandbox: SessionSandbox) -> str:
    """Said once at start: no sandbox, what that means, and what the settings make of it."""
    status = sandbox.status().removeprefix("sandbox: ")
    if sandbox.settings.enabled and sandbox.settings.fail_if_unavailable:
        return f"The sandbox is {status}: commands will not run at all (failIfUnavailable)."
    return (
        f"The sandbox is {status}. Commands the analysis judges read-only run without it, "
        "as before; set sandbox.failIfUnavailable to refuse them instead."
    )
