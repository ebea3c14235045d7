"""Adapters that let agents built on Python agent frameworks decide their tool calls by a
DECISION.md contract: :mod:`.langgraph` (``DecisionToolNode``), :mod:`.openai_agents`
(``DecisionGuard``) and :mod:`.pydantic_ai` (``DecisionToolset``). Each adapter imports its
framework, installed with the package's extra of the same name
(``pip install 'decision-contract[langgraph]'``); the shared part, :mod:`._core`, needs none."""

from ._core import MCP_DEFAULTS, TOOL_GATE_BLOCK, TOOL_GATE_PATH, Answer, ToolCall, ToolGate, Verdict

__all__ = ["MCP_DEFAULTS", "TOOL_GATE_BLOCK", "TOOL_GATE_PATH", "Answer", "ToolCall", "ToolGate", "Verdict"]
