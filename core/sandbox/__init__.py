"""The kernel fence: namespaces, Landlock and seccomp, applied in the child before exec.

`kernel` talks to the kernel through ctypes, `fence` builds a fence from paths and rules,
`support` probes what this kernel offers, and `blocked` explains a denial in words. Which
fence a call gets is decided one layer up, in `core/permissions/sandboxing.py`; the session's
sandbox is `core/permissions/session_sandbox.py`; the `sandbox` settings block is read and
merged with the other settings, in `core/settings/sandbox.py`.
"""
