"""PydanticAI: Airlock answers a run's deferred tool approvals.

Wrap the tools that need a person with :meth:`PydanticAIApprovals.toolset` (every call of
them ends the run with ``DeferredToolRequests``, carrying the tool's schema for Airlock), then
turn the requests into ``DeferredToolResults`` with :meth:`PydanticAIApprovals.resolve`:
an approval is ``ToolApproved`` (a person's edit as ``override_args``), a denial
``ToolDenied(reason)``. ``resolve`` may be called again after the program exited and came back
with the saved messages and requests: the same calls find the same decisions, and an approved
call is claimed once, so its tool runs at most once.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from ._client import Airlock, Decision, StillPending, already_ran

#: Where the tool's schema travels in ``DeferredToolRequests.metadata[tool_call_id]``.
METADATA_KEY = "airlock"


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


class PydanticAIApprovals:
    """Airlock's decisions for one agent session (``session``: one conversation or run; grants
    "for this chat" apply to it)."""

    def __init__(self, airlock: Airlock, *, session: str) -> None:
        self.airlock = airlock
        self.session = session

    def toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any]:
        """``toolset`` with every call asked of Airlock first."""
        return _AskAirlock(toolset)

    def submit(self, requests: DeferredToolRequests) -> dict[str, Decision]:
        """Posts every approval the run asks for; returns each call's decision as it stands
        (pending while nobody decided). Posting again finds the same items."""
        decisions: dict[str, Decision] = {}
        for part in requests.approvals:
            meta = requests.metadata.get(part.tool_call_id, {}).get(METADATA_KEY, {})
            decisions[part.tool_call_id] = self.airlock.request(
                session=self.session,
                tool=part.tool_name,
                args=part.args_as_dict(),
                tool_call_id=part.tool_call_id,
                schema=meta.get("schema"),
                description=meta.get("description"),
            )
        return decisions

    def resolve(
        self, requests: DeferredToolRequests, *, timeout: float | None = None
    ) -> DeferredToolResults:
        """Waits for every decision (``timeout`` seconds at most; ``None``: as long as it takes;
        ``0``: only what is decided already) and returns them as ``DeferredToolResults``.

        Raises :class:`StillPending` when a call is still undecided at the deadline (save the
        run's messages and ``requests`` and call again later), and
        :class:`~airlock_client.AirlockError` when Airlock cannot answer: nothing is approved.
        """
        decisions = {
            call_id: self.airlock.wait(decision, timeout=timeout)
            for call_id, decision in self.submit(requests).items()
        }
        pending = [d.approval_id or call_id for call_id, d in decisions.items() if d.pending]
        if pending:
            raise StillPending(pending)
        results = DeferredToolResults()
        for call_id, decision in decisions.items():
            results.approvals[call_id] = self._result(decision)
        return results

    def _result(self, decision: Decision) -> ToolApproved | ToolDenied:
        if not decision.allowed:
            return ToolDenied(decision.denial_message)
        if not self.airlock.claim(decision):
            again = self.airlock.decision(decision.approval_id) if decision.approval_id else decision
            return ToolDenied(already_ran(again))
        return ToolApproved(override_args=decision.updated_input)
