"""proctor's engine: tools, permissions, the executor and the agent loop.

Nothing in `core` imports textual, rich or `tui`: the engine runs the same under the TUI, a
headless run and the tests, and speaks to all of them through events and ports.
"""

__version__ = "0.1.0"
