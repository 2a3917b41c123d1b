"""The shells behind Bash, TaskOutput and KillShell, one module per part.

- `session`: `ShellSession`, one session's current directory and background shells, reached
  through `shell_session(context)` (the `SHELLS` session service).
- `process`: `ShellProcess`, one `bash -c` in its own process session, writing to its spool
  file, and how its every process group is stopped.
- `foreground`: watching a foreground command to its end, timeout or abort, with progress.
- `spools`: reading and decoding a spool file that may still be growing.

Nothing is re-exported here: each name has one home, and importers name it.
"""
