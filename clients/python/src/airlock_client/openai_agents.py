"""The OpenAI Agents SDK: Airlock answers a run's interruptions.

Give the tools that need a person ``needs_approval=True``; when a run stops with
``result.interruptions``, take its state (``result.to_state()``, which may be saved with
``to_string()`` and loaded with ``RunState.from_string`` after the program exited) and let
:meth:`AsyncOpenAIAgentsApprovals.resolve` (for ``await Runner.run``; the SDK is async-first) or
:meth:`OpenAIAgentsApprovals.resolve` (for ``Runner.run_sync``) approve or reject each
interruption with Airlock's decision (a rejection carries the person's reason as
``rejection_message``). Then run again with the state. The SDK cannot run edited arguments: an
item from it offers no edit in the inbox. An approved call is claimed once, so its tool runs at
most once across resumptions.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Generic, Iterable, TypeVar

from agents import RunState
from agents.items import ToolApprovalItem

from ._client import Airlock, AsyncAirlock, Decision, raise_if_pending

_Client = TypeVar("_Client", Airlock, AsyncAirlock)


def _schema_of(item: ToolApprovalItem) -> tuple[dict[str, Any] | None, str | None]:
    for tool in getattr(item.agent, "tools", []) or []:
        if getattr(tool, "name", None) == item.tool_name:
            return getattr(tool, "params_json_schema", None), getattr(tool, "description", None)
    return None, None


def _arguments(item: ToolApprovalItem) -> dict[str, Any]:
    text = item.arguments
    if not text:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        return {"arguments": text}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}


class _Approvals(Generic[_Client]):
    """What the sync and the async approvals share: the calls to post, applying the answers."""

    def __init__(self, airlock: _Client, *, session: str) -> None:
        self.airlock: _Client = airlock
        self.session = session

    def _calls(self, interruptions: Iterable[ToolApprovalItem]) -> dict[str, dict[str, Any]]:
        """Each interruption, as :meth:`~airlock_client.Airlock.request`'s arguments."""
        calls: dict[str, dict[str, Any]] = {}
        for item in interruptions:
            if not item.call_id:
                raise ValueError(f"the interruption for {item.tool_name} has no call id")
            schema, description = _schema_of(item)
            calls[item.call_id] = {
                "session": self.session,
                "tool": item.tool_name or "tool",
                "args": _arguments(item),
                "tool_call_id": item.call_id,
                "schema": schema,
                "description": description,
                "editable": False,
            }
        return calls

    @staticmethod
    def _apply(
        state: RunState[Any, Any], interruptions: list[ToolApprovalItem], refused: dict[str, str | None]
    ) -> RunState[Any, Any]:
        for item in interruptions:
            why = refused[item.call_id or ""]
            if why is None:
                state.approve(item)
            else:
                state.reject(item, rejection_message=why)
        return state


class OpenAIAgentsApprovals(_Approvals[Airlock]):
    """Airlock's decisions for one agent session (``session``: one conversation or run), for
    ``Runner.run_sync``; :class:`AsyncOpenAIAgentsApprovals` for ``await Runner.run``."""

    def submit(self, interruptions: Iterable[ToolApprovalItem]) -> dict[str, Decision]:
        """Posts every interruption; returns each call's decision as it stands (pending while
        nobody decided). Posting again finds the same items."""
        return {call_id: self.airlock.request(**call) for call_id, call in self._calls(interruptions).items()}

    def resolve(self, state: RunState[Any, Any], *, timeout: float | None = None) -> RunState[Any, Any]:
        """Approves or rejects every interruption of ``state`` with Airlock's decision, waiting
        ``timeout`` seconds at most (``None``: as long as it takes). Raises
        :class:`~airlock_client.StillPending` when one is undecided at the deadline (keep the
        saved state and call again later), and :class:`~airlock_client.AirlockError` when
        Airlock cannot answer: nothing is approved."""
        interruptions = state.get_interruptions()
        decisions = {
            call_id: self.airlock.wait(decision, timeout=timeout)
            for call_id, decision in self.submit(interruptions).items()
        }
        raise_if_pending(decisions)
        refused = {c: self.airlock.refusal_to_run(d) for c, d in decisions.items()}
        return self._apply(state, interruptions, refused)


class AsyncOpenAIAgentsApprovals(_Approvals[AsyncAirlock]):
    """:class:`OpenAIAgentsApprovals` on :class:`~airlock_client.AsyncAirlock`, awaited."""

    async def submit(self, interruptions: Iterable[ToolApprovalItem]) -> dict[str, Decision]:
        """:meth:`OpenAIAgentsApprovals.submit`, awaited."""
        calls = self._calls(interruptions)
        posted = await asyncio.gather(*(self.airlock.request(**call) for call in calls.values()))
        return dict(zip(calls, posted))

    async def resolve(self, state: RunState[Any, Any], *, timeout: float | None = None) -> RunState[Any, Any]:
        """:meth:`OpenAIAgentsApprovals.resolve`, awaited: the decisions are awaited together."""
        interruptions = state.get_interruptions()
        posted = await self.submit(interruptions)
        waited = await asyncio.gather(*(self.airlock.wait(d, timeout=timeout) for d in posted.values()))
        decisions = dict(zip(posted, waited))
        raise_if_pending(decisions)
        refused = {c: await self.airlock.refusal_to_run(d) for c, d in decisions.items()}
        return self._apply(state, interruptions, refused)
