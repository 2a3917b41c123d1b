"""The built-in tools, one module each; `files.py` holds what the file tools share.

The registry (core/registry.py) lists them; nothing here imports them, so that importing one
tool never drags in the others.
"""
