"""The agent: the model client, the offline demo model, the turn loop and transcripts.

`scenario.py` reads scripted sessions (data files in `scenarios/`); `demo.py` plays one
through the real `anthropic` SDK over an in-process transport, so `proctor --demo` and the
loop's tests exercise the same streaming code a live run does. Nothing here imports
anthropic at module level: it takes over a second to load.
"""
