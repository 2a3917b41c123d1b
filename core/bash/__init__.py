"""Bash command analysis: simple commands, read-only classification, wrappers and paths.

Everything here is pure and fails closed: a command is read-only only when every part of
it is positively recognised as such.
"""

from core.bash.analysis import BashAnalysis, analyze
from core.bash.parse import Redirect, SimpleCommand
from core.bash.paths import option_writes, touched_paths
from core.bash.wrappers import SAFE_ENV_VARS, strip_safe_assignments, unwrap

__all__ = [
    "SAFE_ENV_VARS",
    "BashAnalysis",
    "Redirect",
    "SimpleCommand",
    "analyze",
    "option_writes",
    "strip_safe_assignments",
    "touched_paths",
    "unwrap",
]
