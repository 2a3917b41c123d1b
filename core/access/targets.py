"""What a rule specifier is matched against: a call's command, file path or web domain.

A tool says which of these its input amounts to (`Tool.rule_target`), and rules follow that
rather than the tool's name: `Read(.env)` covers every tool that reads a path (Read, Glob,
Grep), `Edit(src/**)` every tool that changes one (Edit, Write, NotebookEdit).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

PathAccess = Literal["read", "edit"]

READ_RULE_TOOLS = frozenset({"Read"})
EDIT_RULE_TOOLS = frozenset({"Edit", "Write", "NotebookEdit", "MultiEdit"})


@dataclass(frozen=True, slots=True)
class CommandTarget:
    """A shell command, matched by Bash rules and analysed part by part."""

    command: str


@dataclass(frozen=True, slots=True)
class PathTarget:
    """A file or directory the call reads or changes, as an absolute path."""

    path: Path
    access: PathAccess


@dataclass(frozen=True, slots=True)
class DomainTarget:
    """The host of a URL the call fetches."""

    host: str


@dataclass(frozen=True, slots=True)
class NameTarget:
    """Something a tool acts on by name (a skill): `Skill(name)` is that one, `Skill(pre:*)`
    every name that starts with `pre`."""

    name: str


RuleTarget = CommandTarget | PathTarget | DomainTarget | NameTarget


def rule_family(rule_tool_name: str) -> PathAccess | None:
    """Which path access a rule's tool name speaks for, if it is a path rule."""
    if rule_tool_name in READ_RULE_TOOLS:
        return "read"
    if rule_tool_name in EDIT_RULE_TOOLS:
        return "edit"
    return None


_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


def canonical_host(raw: str) -> str:
    """A host in the one spelling a connection uses (see core/tools/webfetch.host_of)."""
    host = raw.translate(_DOTS).lower().rstrip(".")
    if not host:
        return ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    if address is not None:
        return str(address)
    if all(part.isdigit() or part.lower().startswith("0x") for part in host.split(".")):
        try:
            return socket.inet_ntoa(socket.inet_aton(host))  # 127.1, 2130706433, 0x7f.1
        except OSError:
            return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host
