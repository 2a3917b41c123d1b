from collections.abc import AsyncIterator

import pytest
from engine_helpers import close_sessions


@pytest.fixture(autouse=True)
async def close_helper_sessions() -> AsyncIterator[None]:
    """Each test's sessions end with it: their background shells stop, their fences go."""
    yield
    await close_sessions()
