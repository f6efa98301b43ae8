"""The OpenAI Agents SDK: Airlock answers a run's interruptions.

Give the tools that need a person ``needs_approval=True``; when a run stops with
``result.interruptions``, take its state (``result.to_state()``, which may be saved with
``to_string()`` and loaded with ``RunState.from_string`` after the program exited) and let
:meth:`OpenAIAgentsApprovals.resolve` approve or reject each interruption with Airlock's
decision (a rejection carries the person's reason as ``rejection_message``). Then run again
with the state. The SDK cannot run edited arguments: an item from it offers no edit in the inbox.
An approved call is claimed once, so its tool runs at most once across resumptions.
"""

from __future__ import annotations

from typing import Any, Iterable

from agents import RunState
from agents.items import ToolApprovalItem

from ._client import Airlock, Decision, StillPending, already_ran


def _schema_of(item: ToolApprovalItem) -> tuple[dict[str, Any] | None, str | None]:
    for tool in getattr(item.agent, "tools", []) or []:
        if getattr(tool, "name", None) == item.tool_name:
            return getattr(tool, "params_json_schema", None), getattr(tool, "description", None)
    return None, None


class OpenAIAgentsApprovals:
    """Airlock's decisions for one agent session (``session``: one conversation or run)."""

    def __init__(self, airlock: Airlock, *, session: str) -> None:
        self.airlock = airlock
        self.session = session

    def submit(self, interruptions: Iterable[ToolApprovalItem]) -> dict[str, Decision]:
        """Posts every interruption; returns each call's decision as it stands (pending while
        nobody decided). Posting again finds the same items."""
        decisions: dict[str, Decision] = {}
        for item in interruptions:
            call_id = item.call_id
            if not call_id:
                raise ValueError(f"the interruption for {item.tool_name} has no call id")
            schema, description = _schema_of(item)
            decisions[call_id] = self.airlock.request(
                session=self.session,
                tool=item.tool_name or "tool",
                args=_arguments(item),
                tool_call_id=call_id,
                schema=schema,
                description=description,
                editable=False,
            )
        return decisions

    def resolve(self, state: RunState[Any, Any], *, timeout: float | None = None) -> RunState[Any, Any]:
        """Approves or rejects every interruption of ``state`` with Airlock's decision, waiting
        ``timeout`` seconds at most (``None``: as long as it takes). Raises :class:`StillPending`
        when one is undecided at the deadline (keep the saved state and call again later), and
        :class:`~airlock_client.AirlockError` when Airlock cannot answer: nothing is approved."""
        interruptions = state.get_interruptions()
        decisions = {
            call_id: self.airlock.wait(decision, timeout=timeout)
            for call_id, decision in self.submit(interruptions).items()
        }
        pending = [d.approval_id or c for c, d in decisions.items() if d.pending]
        if pending:
            raise StillPending(pending)
        for item in interruptions:
            decision = decisions[item.call_id or ""]
            if not decision.allowed:
                state.reject(item, rejection_message=decision.denial_message)
            elif self.airlock.claim(decision):
                state.approve(item)
            else:
                again = (
                    self.airlock.decision(decision.approval_id) if decision.approval_id else decision
                )
                state.reject(item, rejection_message=already_ran(again))
        return state


def _arguments(item: ToolApprovalItem) -> dict[str, Any]:
    import json

    text = item.arguments
    if not text:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        return {"arguments": text}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}
