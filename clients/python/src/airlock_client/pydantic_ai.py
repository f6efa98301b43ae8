"""PydanticAI: Airlock answers a run's deferred tool approvals.

Wrap the tools that need a person with :meth:`PydanticAIApprovals.toolset` (every call of
them ends the run with ``DeferredToolRequests``, carrying the tool's schema for Airlock), then
turn the requests into ``DeferredToolResults`` with :meth:`PydanticAIApprovals.resolve`:
an approval is ``ToolApproved`` (a person's edit as ``override_args``), a denial
``ToolDenied(reason)``. ``resolve`` may be called again after the program exited and came back
with the saved messages and requests: the same calls find the same decisions, and an approved
call is claimed once, so its tool runs at most once.

:class:`AsyncPydanticAIApprovals` is the same on :class:`~airlock_client.AsyncAirlock`, for
``await agent.run(...)``: its ``submit`` and ``resolve`` are awaited, and it waits for every
call's decision at once.
"""

from __future__ import annotations

import asyncio
from typing import Any, Generic, TypeVar

from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from ._client import Airlock, AsyncAirlock, Decision, raise_if_pending

#: Where the tool's schema travels in ``DeferredToolRequests.metadata[tool_call_id]``.
METADATA_KEY = "airlock"

_Client = TypeVar("_Client", Airlock, AsyncAirlock)


class _AskAirlock(WrapperToolset[Any]):
    """Every call of the wrapped tools needs an approval; its schema goes with the request."""

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        if not ctx.tool_call_approved:
            definition: ToolDefinition = tool.tool_def
            raise ApprovalRequired(
                metadata={
                    METADATA_KEY: {
                        "schema": definition.parameters_json_schema,
                        "description": definition.description,
                    }
                }
            )
        return await super().call_tool(name, tool_args, ctx, tool)


class _Approvals(Generic[_Client]):
    """What the sync and the async approvals share: the toolset, the calls to post, the
    results."""

    def __init__(self, airlock: _Client, *, session: str) -> None:
        self.airlock: _Client = airlock
        self.session = session

    def toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any]:
        """``toolset`` with every call asked of Airlock first."""
        return _AskAirlock(toolset)

    def _calls(self, requests: DeferredToolRequests) -> dict[str, dict[str, Any]]:
        """Each approval asked for, as :meth:`~airlock_client.Airlock.request`'s arguments."""
        calls: dict[str, dict[str, Any]] = {}
        for part in requests.approvals:
            meta = requests.metadata.get(part.tool_call_id, {}).get(METADATA_KEY, {})
            calls[part.tool_call_id] = {
                "session": self.session,
                "tool": part.tool_name,
                "args": part.args_as_dict(),
                "tool_call_id": part.tool_call_id,
                "schema": meta.get("schema"),
                "description": meta.get("description"),
            }
        return calls

    @staticmethod
    def _results(answered: dict[str, tuple[Decision, str | None]]) -> DeferredToolResults:
        results = DeferredToolResults()
        for call_id, (decision, refused) in answered.items():
            results.approvals[call_id] = (
                ToolApproved(override_args=decision.updated_input) if refused is None else ToolDenied(refused)
            )
        return results


class PydanticAIApprovals(_Approvals[Airlock]):
    """Airlock's decisions for one agent session (``session``: one conversation or run; grants
    "for this chat" apply to it)."""

    def submit(self, requests: DeferredToolRequests) -> dict[str, Decision]:
        """Posts every approval the run asks for; returns each call's decision as it stands
        (pending while nobody decided). Posting again finds the same items."""
        return {call_id: self.airlock.request(**call) for call_id, call in self._calls(requests).items()}

    def resolve(self, requests: DeferredToolRequests, *, timeout: float | None = None) -> DeferredToolResults:
        """Waits for every decision (``timeout`` seconds at most; ``None``: as long as it takes;
        ``0``: only what is decided already) and returns them as ``DeferredToolResults``.

        Raises :class:`~airlock_client.StillPending` when a call is still undecided at the
        deadline (save the run's messages and ``requests`` and call again later), and
        :class:`~airlock_client.AirlockError` when Airlock cannot answer: nothing is approved.
        """
        decisions = {
            call_id: self.airlock.wait(decision, timeout=timeout)
            for call_id, decision in self.submit(requests).items()
        }
        raise_if_pending(decisions)
        return self._results({c: (d, self.airlock.refusal_to_run(d)) for c, d in decisions.items()})


class AsyncPydanticAIApprovals(_Approvals[AsyncAirlock]):
    """:class:`PydanticAIApprovals` on :class:`~airlock_client.AsyncAirlock`, awaited."""

    async def submit(self, requests: DeferredToolRequests) -> dict[str, Decision]:
        """:meth:`PydanticAIApprovals.submit`, awaited."""
        calls = self._calls(requests)
        posted = await asyncio.gather(*(self.airlock.request(**call) for call in calls.values()))
        return dict(zip(calls, posted))

    async def resolve(self, requests: DeferredToolRequests, *, timeout: float | None = None) -> DeferredToolResults:
        """:meth:`PydanticAIApprovals.resolve`, awaited: the decisions are awaited together."""
        posted = await self.submit(requests)
        waited = await asyncio.gather(*(self.airlock.wait(d, timeout=timeout) for d in posted.values()))
        decisions = dict(zip(posted, waited))
        raise_if_pending(decisions)
        refused = [await self.airlock.refusal_to_run(d) for d in decisions.values()]
        return self._results(dict(zip(decisions, zip(decisions.values(), refused))))
