"""The bounds of `autoCompact` as a percentage: settings check them, compaction uses them.

They sit in settings, the lower layer, so that parsing a file need not import the agent."""

DEFAULT_THRESHOLD_PERCENT = 90
MIN_THRESHOLD_PERCENT = 50
MAX_THRESHOLD_PERCENT = 99
