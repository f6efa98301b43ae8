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
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from langgraph.types import Command, Interrupt

from ._client import Airlock, Decision, StillPending, already_ran


def _schema(tool: Any) -> dict[str, Any] | None:
    schema = getattr(tool, "tool_call_schema", None)
    if schema is None:
        return None
    if isinstance(schema, dict):
        return schema
    try:
        return schema.model_json_schema()  # a pydantic model
    except Exception:  # noqa: BLE001 - a schema Airlock cannot read only loses the edit check
        return None


class LangGraphApprovals:
    """Airlock's decisions for one thread (``session``: the graph's thread id is a good one).
    ``tools``: the agent's tools, whose schemas let the inbox check an edit."""

    def __init__(self, airlock: Airlock, *, session: str, tools: Iterable[Any] = ()) -> None:
        self.airlock = airlock
        self.session = session
        self._tools = {getattr(t, "name", None): t for t in tools}

    def _ask(self, key: str, name: str, args: Mapping[str, Any], editable: bool, description: str | None) -> Decision:
        tool = self._tools.get(name)
        return self.airlock.request(
            session=self.session,
            tool=name,
            args=args,
            tool_call_id=key,
            schema=_schema(tool) if tool is not None else None,
            description=description or getattr(tool, "description", None),
            editable=editable,
        )

    def _answer(self, name: str, decision: Decision) -> dict[str, Any]:
        if not decision.allowed:
            return {"type": "reject", "message": decision.denial_message}
        if not self.airlock.claim(decision):
            again = self.airlock.decision(decision.approval_id) if decision.approval_id else decision
            return {"type": "reject", "message": already_ran(again)}
        if decision.updated_input is not None:
            return {"type": "edit", "edited_action": {"name": name, "args": decision.updated_input}}
        return {"type": "approve"}

    def _asked(self, interrupts: Sequence[Interrupt]) -> list[tuple[Interrupt, list[tuple[str, Decision]]]]:
        """Posts every call the interrupts ask about: each interrupt with its calls' decisions."""
        asked: list[tuple[Interrupt, list[tuple[str, Decision]]]] = []
        for interrupt in interrupts:
            value = interrupt.value
            if isinstance(value, dict) and value.get("type") == "tool_approval":
                # per_call: one call, its own id.
                decision = self._ask(
                    value["tool_call_id"], value["name"], value.get("args", {}), True, value.get("description")
                )
                asked.append((interrupt, [(value["name"], decision)]))
            elif isinstance(value, dict) and "action_requests" in value:
                # batched: the calls of one model turn, known by the interrupt and their place.
                allowed = {
                    c.get("action_name"): c.get("allowed_decisions", [])
                    for c in value.get("review_configs", [])
                }
                calls = []
                for index, action in enumerate(value["action_requests"]):
                    name = action["name"]
                    decision = self._ask(
                        f"{interrupt.id}:{index}",
                        name,
                        action.get("args", {}),
                        "edit" in allowed.get(name, []),
                        action.get("description"),
                    )
                    calls.append((name, decision))
                asked.append((interrupt, calls))
            else:
                raise ValueError(f"not a human-in-the-loop interrupt: {value!r}")
        return asked

    def submit(self, interrupts: Sequence[Interrupt]) -> dict[str, Decision]:
        """Posts every call the interrupts ask about; returns each decision as it stands
        (pending while nobody decided), by inbox item or call. Posting again finds the same
        items."""
        return {
            decision.approval_id or f"{interrupt.id}:{index}": decision
            for interrupt, calls in self._asked(interrupts)
            for index, (_, decision) in enumerate(calls)
        }

    def resume(self, interrupts: Sequence[Interrupt], *, timeout: float | None = None) -> Command:
        """The ``Command(resume=...)`` that answers ``interrupts`` with Airlock's decisions,
        waiting ``timeout`` seconds at most (``None``: as long as it takes). Raises
        :class:`StillPending` when one is undecided at the deadline (call again later with the
        graph's interrupts) and :class:`~airlock_client.AirlockError` when Airlock cannot
        answer: nothing is approved."""
        waited = [
            (interrupt, [(name, self.airlock.wait(d, timeout=timeout)) for name, d in calls])
            for interrupt, calls in self._asked(interrupts)
        ]
        pending = [d.approval_id or "?" for _, calls in waited for _, d in calls if d.pending]
        if pending:
            raise StillPending(pending)
        resume: dict[str, Any] = {}
        for interrupt, calls in waited:
            answers = [self._answer(name, decision) for name, decision in calls]
            if isinstance(interrupt.value, dict) and interrupt.value.get("type") == "tool_approval":
                resume[interrupt.id] = answers[0]
            else:
                resume[interrupt.id] = {"decisions": answers}
        return Command(resume=resume)
