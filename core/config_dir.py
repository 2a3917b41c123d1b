"""Where the user's proctor configuration lives (settings, trust, themes).

On its own so that the app can find user themes before its first frame without importing
the settings reader (the rule parser and hooks come with it).
"""

from __future__ import annotations

import os
from pathlib import Path


def user_config_dir() -> Path:
    """`$PROCTOR_CONFIG_DIR`, or the platform's config directory for proctor."""
    override = os.environ.get("PROCTOR_CONFIG_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_config_dir("proctor"))
