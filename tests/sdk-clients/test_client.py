"""The core clients (`Airlock`, `AsyncAirlock`) against a real engine, without an SDK: a
program's own token posts its calls and reads their decisions and nothing else, and a wait
takes the decision from the call's event stream the moment a person makes it."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest

from airlock_client import Airlock, AirlockError, AsyncAirlock, Decision

CALL = {"session": "s1", "tool": "delete_file", "args": {"path": "a.txt"}, "schema": {"type": "object"}}


def over_the_socket(engine, token: str) -> httpx.Client:
    """A raw HTTP client on the engine's socket with `token`: what a program could try."""
    return httpx.Client(
        transport=httpx.HTTPTransport(uds=str(engine.data_dir / "api.sock")),
        base_url="http://airlock",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )


def test_a_programs_own_token_posts_and_reads_its_calls_and_nothing_else(engine):
    own, other = engine.token("ledger-app"), engine.token("other-app")
    airlock = Airlock("ledger-app", data_dir=engine.data_dir, token=own)
    posted = airlock.request(**CALL, tool_call_id="call_1")
    assert posted.pending and posted.approval_id
    assert airlock.decision(posted.approval_id).pending
    assert airlock.wait(posted, timeout=0.1).pending

    refusals = {
        "post as another program": lambda: Airlock("other-app", data_dir=engine.data_dir, token=own).request(
            **CALL, tool_call_id="call_2"
        ),
        "read another's call": lambda: Airlock("other-app", data_dir=engine.data_dir, token=other).decision(
            posted.approval_id
        ),
        "wait on another's call": lambda: Airlock("other-app", data_dir=engine.data_dir, token=other).wait(
            posted, timeout=1
        ),
        "claim another's call": lambda: Airlock("other-app", data_dir=engine.data_dir, token=other).claim(posted),
    }
    for what, attempt in refusals.items():
        with pytest.raises(AirlockError) as refused:
            attempt()
        assert refused.value.code == "not_allowed", (what, refused.value)
    with over_the_socket(engine, own) as raw:
        for method, path, body in [
            ("GET", "/v1/inbox", None),
            ("GET", "/v1/audit", None),
            ("POST", "/v1/decisions", {"approval_id": posted.approval_id, "decision": {"kind": "approve"}}),
            ("POST", "/v1/commands/decide", {"decisions": [{"approval_id": posted.approval_id, "decision": {"kind": "approve"}}]}),
            ("POST", "/v1/commands/issue_agent_token", {"agent": "ledger-app"}),
        ]:
            answer = raw.request(method, path, json=body)
            assert answer.status_code == 403, (path, answer.text)
    [item] = engine.inbox()
    assert item["approval_id"] == posted.approval_id, "a program's own token decided its call"


def test_wait_takes_the_decision_from_the_event_stream_when_it_is_made(engine):
    airlock = Airlock("ledger-app", data_dir=engine.data_dir, token=engine.token("ledger-app"))
    posted = airlock.request(**CALL, tool_call_id="call_1")
    started = threading.Event()
    waited: list[Decision] = []

    def wait() -> None:
        started.set()
        waited.append(airlock.wait(posted, timeout=60))

    waiting = threading.Thread(target=wait)
    waiting.start()
    started.wait(10)
    engine.deny(posted.approval_id, "keep a.txt")
    decided_at = time.monotonic()
    waiting.join(30)
    assert waited, "the wait did not return"
    assert (waited[0].verdict, waited[0].status, waited[0].reason) == ("deny", "denied", "keep a.txt")
    assert time.monotonic() - decided_at < 5, "the decision came late"
    # Decided: the same answer at once, each time.
    assert airlock.wait(posted, timeout=0) == waited[0]


def test_the_async_client_posts_waits_and_claims_once(engine):
    async def program() -> tuple[Decision, Decision, bool, bool]:
        async with AsyncAirlock("ledger-app", data_dir=engine.data_dir, token=engine.token("ledger-app")) as airlock:
            posted = await airlock.request(**CALL, tool_call_id="call_1")
            still = await airlock.wait(posted, timeout=0.2)
            approving = asyncio.get_running_loop().run_in_executor(None, engine.approve, posted.approval_id)
            decided = await airlock.wait(posted, timeout=60)
            await approving
            return still, decided, await airlock.claim(decided), await airlock.claim(decided)

    still, decided, first, second = asyncio.run(program())
    assert still.pending
    assert (decided.verdict, decided.status) == ("allow", "approved")
    assert (first, second) == (True, False), "an approved call is claimed to run once"
