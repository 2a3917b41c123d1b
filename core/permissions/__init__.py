"""Permissions: who may run what, and why.

`context` holds the data (modes, rules, the live permission context), `rules` the rule
language, `decision` the closed result types, and `decide` the decision chain that turns a
tool call into allow, ask or deny.
"""
