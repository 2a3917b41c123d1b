import sys
from pathlib import Path

# The helpers shared by the tests (tools written for the tests) live beside them.
sys.path.insert(0, str(Path(__file__).parent))

import os

# The machine's own ~/.claude/settings.json must not reach the tests: proctor reads it (the
# user's Claude settings), so it points at a folder that is not there; a test that needs
# one sets CLAUDE_CONFIG_DIR itself.
os.environ["CLAUDE_CONFIG_DIR"] = "/nonexistent/proctor-tests/claude"
