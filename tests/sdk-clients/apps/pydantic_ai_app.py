"""A PydanticAI program whose `delete_file` tool asks Airlock first.

    start             run until the tool needs approval, post it to Airlock, save the run, exit
    resume [SECONDS]  collect the decisions (waiting SECONDS at most), finish the run, print it
    run               both in one process, waiting as long as it takes

$APP_MODE picks the client: `async` (AsyncAirlock, `await agent.run`; the default, PydanticAI
being async-first) or `sync` (Airlock, `agent.run_sync`). The program's own token is in
$AIRLOCK_TOKEN. The tool appends each call it runs to $APP_RAN, so a test counts runs across
processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.toolsets import FunctionToolset

from airlock_client import Airlock, AirlockError, AsyncAirlock, StillPending
from airlock_client.pydantic_ai import AsyncPydanticAIApprovals, PydanticAIApprovals

STATE = Path(os.environ["APP_STATE"])
RAN = Path(os.environ["APP_RAN"])
SESSION = os.environ["APP_SESSION"]
ASYNC = os.environ.get("APP_MODE", "async") == "async"
REQUESTS = TypeAdapter(DeferredToolRequests)


def delete_file(path: str) -> str:
    """Delete the file at `path`."""
    with RAN.open("a") as ran:
        ran.write(json.dumps({"path": path}) + "\n")
    return f"deleted {path}"


data_dir = os.environ["AIRLOCK_DATA_DIR"]
approvals: Any = (
    AsyncPydanticAIApprovals(AsyncAirlock("pydantic-app", data_dir=data_dir), session=SESSION)
    if ASYNC
    else PydanticAIApprovals(Airlock("pydantic-app", data_dir=data_dir), session=SESSION)
)
model = OpenAIChatModel("scripted", provider=OpenAIProvider(base_url=os.environ["MODEL_URL"], api_key="test"))
agent = Agent(
    model,
    toolsets=[approvals.toolset(FunctionToolset([delete_file]))],
    output_type=[str, DeferredToolRequests],
)


def save(result: Any) -> DeferredToolRequests:
    """Keeps the run's messages and its requests, as a program that exits while a person
    decides does."""
    assert isinstance(result.output, DeferredToolRequests), result.output
    STATE.write_text(
        json.dumps(
            {
                "messages": json.loads(result.all_messages_json()),
                "requests": json.loads(REQUESTS.dump_json(result.output)),
            }
        )
    )
    return result.output


def saved() -> tuple[Any, DeferredToolRequests]:
    state = json.loads(STATE.read_text())
    return ModelMessagesTypeAdapter.validate_python(state["messages"]), REQUESTS.validate_python(state["requests"])


def posted(decisions: dict[str, Any]) -> None:
    print(json.dumps({call_id: d.approval_id for call_id, d in decisions.items()}))


def still_pending(pending: StillPending) -> None:
    print(pending, file=sys.stderr)
    sys.exit(3)


def start_sync() -> None:
    posted(approvals.submit(save(agent.run_sync("Delete a.txt"))))


def resume_sync(timeout: float | None) -> None:
    messages, requests = saved()
    try:
        results = approvals.resolve(requests, timeout=timeout)
    except StillPending as pending:
        still_pending(pending)
    result = agent.run_sync(message_history=messages, deferred_tool_results=results)
    print(json.dumps({"output": result.output}))


async def start_async() -> None:
    posted(await approvals.submit(save(await agent.run("Delete a.txt"))))


async def resume_async(timeout: float | None) -> None:
    messages, requests = saved()
    try:
        results = await approvals.resolve(requests, timeout=timeout)
    except StillPending as pending:
        still_pending(pending)
    result = await agent.run(message_history=messages, deferred_tool_results=results)
    print(json.dumps({"output": result.output}))


async def run_async() -> None:
    await start_async()
    await resume_async(None)


def main() -> None:
    command = sys.argv[1]
    timeout = float(sys.argv[2]) if len(sys.argv) > 2 else None
    try:
        if command == "start":
            asyncio.run(start_async()) if ASYNC else start_sync()
        elif command == "resume":
            asyncio.run(resume_async(timeout)) if ASYNC else resume_sync(timeout)
        elif command == "run":
            if ASYNC:
                asyncio.run(run_async())
            else:
                start_sync()
                resume_sync(None)
    except AirlockError as error:
        print(f"airlock: {error}", file=sys.stderr)
        sys.exit(2)


main()
