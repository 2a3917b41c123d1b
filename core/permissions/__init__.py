"""Permissions: the decision chain that turns a tool call into allow, ask or deny, and why.

`decide` is the chain; `call` what a call amounts to (its command parts, its paths);
`match` how rules meet calls; `shell_reach`, `shell_places`, `reach` and `git_history`
what a shell command reaches; `sandboxing` which fence a command runs in;
`session_sandbox` the session's sandbox; `audit` the record of every decision. The words
they use (modes, rules, decisions) are values one layer down, in `core/access/`.
"""
