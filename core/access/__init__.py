"""The permission vocabulary: the words every layer above speaks about who may do what.

`context` (the mode and the rules in force, one immutable value), `modes` (what each mode
allows by itself, and the mode key's cycle), `rules` (the rule language), `targets` (what a
rule is matched against: a command, a path, a domain), `paths` (where a path really is,
what is inside and what is protected), `decision` (`Allow | Ask | Deny` and what decided
them) and `sandbox_policy` (which fence a command runs in).

This is the lowest layer of core: it imports nothing else from it, so the tool model, the
settings, the kernel sandbox and the decision chain can all use it without a cycle.
"""
