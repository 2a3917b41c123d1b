"""The executor: runs tool calls through their lifecycle, in parallel where it is safe.

- `lifecycle.run_tool_use`: one call through the nine stages.
- `streaming.StreamingToolExecutor`: calls start as their blocks arrive from the stream.
- `orchestration.run_tools`: the batch path, for calls known all at once.
"""

from ..events import CancelReason, Stage
from .calls import (
    ExecutorUpdate,
    ProgressUpdate,
    ResultUpdate,
    ToolCall,
    ToolCallOutcome,
)
from .lifecycle import run_tool_use
from .orchestration import Batch, partition_tool_calls, run_tools
from .services import ExecutorServices
from .streaming import StreamingToolExecutor

__all__ = [
    "Batch",
    "CancelReason",
    "ExecutorServices",
    "ExecutorUpdate",
    "ProgressUpdate",
    "ResultUpdate",
    "Stage",
    "StreamingToolExecutor",
    "ToolCall",
    "ToolCallOutcome",
    "partition_tool_calls",
    "run_tool_use",
    "run_tools",
]
