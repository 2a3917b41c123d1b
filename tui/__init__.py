"""proctor's front end: the Textual app, its screens and widgets, and the command line.

`tui.cli` is the console script. It imports nothing heavy at module level, so that
`proctor --version` answers without loading textual or anthropic.
"""
