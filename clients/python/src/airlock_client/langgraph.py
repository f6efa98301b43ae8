"""LangGraph / LangChain: Airlock answers ``HumanInTheLoopMiddleware``'s interrupts.

Build the agent with ``HumanInTheLoopMiddleware`` (``interrupt_on`` for the tools that need a
person) and a checkpointer; when a run stops at an interrupt (``result["__interrupt__"]``, or
``graph.get_state(config).interrupts`` after the program came back), let
:meth:`LangGraphApprovals.resume` turn Airlock's decisions into the resume value and invoke the
graph with it: approve, edit (``edited_action`` with the person's arguments, where the tool's
``allowed_decisions`` include ``edit``) or reject with the person's reason as its ``message``.
Both interrupt modes are answered: ``batched`` (one ``HITLRequest`` per model turn) and
``per_call`` (one ``tool_approval`` request per call). An approved call is claimed once, so its
tool runs at most once across resumptions.

:class:`AsyncLangGraphApprovals` is the same on :class:`~airlock_client.AsyncAirlock`, for
``await graph.ainvoke(...)``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Generic, Iterable, Sequence, TypeVar

from langgraph.types import Command, Interrupt

from ._client import Airlock, AsyncAirlock, Decision, raise_if_pending

_Client = TypeVar("_Client", Airlock, AsyncAirlock)


def _schema(tool: Any) -> dict[str, Any] | None:
    schema = getattr(tool, "tool_call_schema", None)
    if schema is None:
        return None
    if isinstance(schema, dict):
        return schema
    try:
        found = schema.model_json_schema()  # a pydantic model
    except Exception:  # noqa: BLE001 - a schema Airlock cannot read only loses the edit check
        return None
    return found if isinstance(found, dict) else None


@dataclass(frozen=True)
class _Ask:
    """One call an interrupt asks about: its key among the answers, its tool's name, and
    :meth:`~airlock_client.Airlock.request`'s arguments."""

    key: str
    name: str
    call: dict[str, Any]


class _Approvals(Generic[_Client]):
    """What the sync and the async approvals share: the calls to post, the resume value."""

    def __init__(self, airlock: _Client, *, session: str, tools: Iterable[Any] = ()) -> None:
        self.airlock: _Client = airlock
        self.session = session
        self._tools = {getattr(t, "name", None): t for t in tools}

    def _ask(self, key: str, name: str, args: Any, editable: bool, description: str | None) -> _Ask:
        tool = self._tools.get(name)
        return _Ask(
            key=key,
            name=name,
            call={
                "session": self.session,
                "tool": name,
                "args": args,
                "tool_call_id": key,
                "schema": _schema(tool) if tool is not None else None,
                "description": description or getattr(tool, "description", None),
                "editable": editable,
            },
        )

    def _asks(self, interrupts: Sequence[Interrupt]) -> list[tuple[Interrupt, list[_Ask]]]:
        """Every call the interrupts ask about, by interrupt."""
        asks: list[tuple[Interrupt, list[_Ask]]] = []
        for interrupt in interrupts:
            value = interrupt.value
            if isinstance(value, dict) and value.get("type") == "tool_approval":
                # per_call: one call, its own id.
                asks.append(
                    (
                        interrupt,
                        [
                            self._ask(
                                value["tool_call_id"], value["name"], value.get("args", {}), True,
                                value.get("description"),
                            )
                        ],
                    )
                )
            elif isinstance(value, dict) and "action_requests" in value:
                # batched: the calls of one model turn, known by the interrupt and their place.
                allowed = {
                    c.get("action_name"): c.get("allowed_decisions", [])
                    for c in value.get("review_configs", [])
                }
                asks.append(
                    (
                        interrupt,
                        [
                            self._ask(
                                f"{interrupt.id}:{index}", action["name"], action.get("args", {}),
                                "edit" in allowed.get(action["name"], []), action.get("description"),
                            )
                            for index, action in enumerate(value["action_requests"])
                        ],
                    )
                )
            else:
                raise ValueError(f"not a human-in-the-loop interrupt: {value!r}")
        return asks

    @staticmethod
    def _answer(name: str, decision: Decision, refused: str | None) -> dict[str, Any]:
        if refused is not None:
            return {"type": "reject", "message": refused}
        if decision.updated_input is not None:
            return {"type": "edit", "edited_action": {"name": name, "args": decision.updated_input}}
        return {"type": "approve"}

    @staticmethod
    def _resume(
        asks: list[tuple[Interrupt, list[_Ask]]], answers: dict[str, dict[str, Any]]
    ) -> Command[Any]:
        resume: dict[str, Any] = {}
        for interrupt, calls in asks:
            given = [answers[ask.key] for ask in calls]
            if isinstance(interrupt.value, dict) and interrupt.value.get("type") == "tool_approval":
                resume[interrupt.id] = given[0]
            else:
                resume[interrupt.id] = {"decisions": given}
        return Command(resume=resume)


class LangGraphApprovals(_Approvals[Airlock]):
    """Airlock's decisions for one thread (``session``: the graph's thread id is a good one).
    ``tools``: the agent's tools, whose schemas let the inbox check an edit."""

    def submit(self, interrupts: Sequence[Interrupt]) -> dict[str, Decision]:
        """Posts every call the interrupts ask about; returns each decision as it stands
        (pending while nobody decided), by the call's key. Posting again finds the same
        items."""
        return {ask.key: self.airlock.request(**ask.call) for _, calls in self._asks(interrupts) for ask in calls}

    def resume(self, interrupts: Sequence[Interrupt], *, timeout: float | None = None) -> Command[Any]:
        """The ``Command(resume=...)`` that answers ``interrupts`` with Airlock's decisions,
        waiting ``timeout`` seconds at most (``None``: as long as it takes). Raises
        :class:`~airlock_client.StillPending` when one is undecided at the deadline (call again
        later with the graph's interrupts) and :class:`~airlock_client.AirlockError` when
        Airlock cannot answer: nothing is approved."""
        asks = self._asks(interrupts)
        names = {ask.key: ask.name for _, calls in asks for ask in calls}
        decisions = {
            ask.key: self.airlock.wait(self.airlock.request(**ask.call), timeout=timeout)
            for _, calls in asks
            for ask in calls
        }
        raise_if_pending(decisions)
        answers = {k: self._answer(names[k], d, self.airlock.refusal_to_run(d)) for k, d in decisions.items()}
        return self._resume(asks, answers)


class AsyncLangGraphApprovals(_Approvals[AsyncAirlock]):
    """:class:`LangGraphApprovals` on :class:`~airlock_client.AsyncAirlock`, awaited."""

    async def submit(self, interrupts: Sequence[Interrupt]) -> dict[str, Decision]:
        """:meth:`LangGraphApprovals.submit`, awaited."""
        asks = [ask for _, calls in self._asks(interrupts) for ask in calls]
        posted = await asyncio.gather(*(self.airlock.request(**ask.call) for ask in asks))
        return {ask.key: decision for ask, decision in zip(asks, posted)}

    async def resume(self, interrupts: Sequence[Interrupt], *, timeout: float | None = None) -> Command[Any]:
        """:meth:`LangGraphApprovals.resume`, awaited: the decisions are awaited together."""
        asks = self._asks(interrupts)
        names = {ask.key: ask.name for _, calls in asks for ask in calls}
        posted = await self.submit(interrupts)
        waited = await asyncio.gather(*(self.airlock.wait(d, timeout=timeout) for d in posted.values()))
        decisions = dict(zip(posted, waited))
        raise_if_pending(decisions)
        answers = {k: self._answer(names[k], d, await self.airlock.refusal_to_run(d)) for k, d in decisions.items()}
        return self._resume(asks, answers)
