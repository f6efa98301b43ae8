"""Approval clients for agent SDKs: ask Airlock (the approval inbox) before a tool runs.

The core client (:class:`Airlock`, and :class:`AsyncAirlock` for asyncio) posts a tool call to
the running Airlock engine with the program's own token, gets an id at once and collects the
decision later, even after the program exited. The adapters for PydanticAI
(``airlock_client.pydantic_ai``), the OpenAI Agents SDK (``airlock_client.openai_agents``) and
LangGraph/LangChain (``airlock_client.langgraph``) turn those decisions into each SDK's own
answers, each in a sync and an async flavour; each imports its SDK only when it is imported.
"""

from ._client import (
    TOKEN_ENV,
    Airlock,
    AirlockError,
    AsyncAirlock,
    Decision,
    EngineUnavailable,
    StillPending,
    already_ran,
    default_data_dir,
    raise_if_pending,
)

__all__ = [
    "TOKEN_ENV",
    "Airlock",
    "AirlockError",
    "AsyncAirlock",
    "Decision",
    "EngineUnavailable",
    "StillPending",
    "already_ran",
    "default_data_dir",
    "raise_if_pending",
]
