"""Tools with real permission surfaces, for the decision chain's tests.

They describe their input the way the built-in tools do (`rule_target`, `is_read_only`);
they never run, since the chain decides before any call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from core.access.targets import CommandTarget, DomainTarget, PathTarget, RuleTarget
from core.bash import analyze
from core.tool import Tool, ToolInput


class PathInput(ToolInput):
    file_path: str


class FileReader(Tool[PathInput, Any]):
    name = "Read"
    input_model = PathInput

    def __init__(self, name: str = "Read") -> None:
        self.name = name

    def is_read_only(self, input: PathInput) -> bool:
        return True

    def is_concurrency_safe(self, input: PathInput) -> bool:
        return True

    def rule_target(self, input: PathInput, cwd: Path) -> RuleTarget:
        return PathTarget(cwd / input.file_path, "read")


class FileEditor(Tool[PathInput, Any]):
    name = "Edit"
    input_model = PathInput

    def __init__(self, name: str = "Edit") -> None:
        self.name = name

    def rule_target(self, input: PathInput, cwd: Path) -> RuleTarget:
        return PathTarget(cwd / input.file_path, "edit")


class UrlInput(ToolInput):
    url: str


class Fetcher(Tool[UrlInput, Any]):
    name = "WebFetch"
    input_model = UrlInput

    def is_read_only(self, input: UrlInput) -> bool:
        return True

    def rule_target(self, input: UrlInput, cwd: Path) -> RuleTarget:
        return DomainTarget(urlparse(input.url).hostname or "")


class CommandInput(ToolInput):
    command: str


class Shell(Tool[CommandInput, Any]):
    name = "Bash"
    input_model = CommandInput

    def is_read_only(self, input: CommandInput) -> bool:
        return analyze(input.command).read_only

    def is_concurrency_safe(self, input: CommandInput) -> bool:
        return self.is_read_only(input)

    def rule_target(self, input: CommandInput, cwd: Path) -> RuleTarget:
        return CommandTarget(input.command)


class Opaque(Tool[CommandInput, Any]):
    """A tool that does not say what its input touches."""

    name = "Opaque"
    input_model = CommandInput
