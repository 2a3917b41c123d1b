"""The built-in tools, one module each; `files.py` and `shells/` hold what several share.

`files.py` serves the file tools; `shells/` serves Bash, TaskOutput and KillShell. The
registry (core/registry.py) lists them; nothing here imports them, so that importing one tool
never drags in the others.
"""
