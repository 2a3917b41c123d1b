import sys
from pathlib import Path

# The helpers shared by the tests (tools written for the tests) live beside them.
sys.path.insert(0, str(Path(__file__).parent))
