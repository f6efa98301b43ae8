"""An OpenAI Agents SDK program whose `delete_file` tool needs approval, answered by Airlock.

    start             run until the tool's interruption, post it to Airlock, save the RunState, exit
    resume [SECONDS]  load the RunState, apply the decisions (waiting SECONDS at most), finish
    run               both in one process, waiting as long as it takes

$APP_MODE picks the client: `async` (AsyncAirlock and `await Runner.run`; the default, the SDK
being async-first) or `sync` (Airlock and `Runner.run_sync`). The program's own token is in
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

from agents import Agent, OpenAIChatCompletionsModel, Runner, RunState, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

from airlock_client import Airlock, AirlockError, AsyncAirlock, StillPending
from airlock_client.openai_agents import AsyncOpenAIAgentsApprovals, OpenAIAgentsApprovals

STATE = Path(os.environ["APP_STATE"])
RAN = Path(os.environ["APP_RAN"])
SESSION = os.environ["APP_SESSION"]
ASYNC = os.environ.get("APP_MODE", "async") == "async"
set_tracing_disabled(True)


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete the file at `path`."""
    with RAN.open("a") as ran:
        ran.write(json.dumps({"path": path}) + "\n")
    return f"deleted {path}"


data_dir = os.environ["AIRLOCK_DATA_DIR"]
approvals: Any = (
    AsyncOpenAIAgentsApprovals(AsyncAirlock("openai-agents-app", data_dir=data_dir), session=SESSION)
    if ASYNC
    else OpenAIAgentsApprovals(Airlock("openai-agents-app", data_dir=data_dir), session=SESSION)
)
model = OpenAIChatCompletionsModel(
    model="scripted", openai_client=AsyncOpenAI(base_url=os.environ["MODEL_URL"], api_key="test")
)
agent = Agent(name="files", instructions="You manage files.", tools=[delete_file], model=model)


def save(result: Any) -> Any:
    """Keeps the run's state, as a program that exits while a person decides does."""
    assert result.interruptions, result.final_output
    STATE.write_text(result.to_state().to_string())
    return result.interruptions


def posted(decisions: dict[str, Any]) -> None:
    print(json.dumps({call_id: d.approval_id for call_id, d in decisions.items()}))


def still_pending(pending: StillPending) -> None:
    print(pending, file=sys.stderr)
    sys.exit(3)


def start_sync() -> None:
    posted(approvals.submit(save(Runner.run_sync(agent, "Delete a.txt"))))


def resume_sync(timeout: float | None) -> None:
    # RunState.from_string is async: on a loop of its own, leaving the thread's default loop
    # (the one Runner.run_sync keeps using) alone.
    loading = asyncio.new_event_loop()
    try:
        state = loading.run_until_complete(RunState.from_string(agent, STATE.read_text()))
    finally:
        loading.close()
    try:
        approvals.resolve(state, timeout=timeout)
    except StillPending as pending:
        still_pending(pending)
    print(json.dumps({"output": Runner.run_sync(agent, state).final_output}))


async def start_async() -> None:
    posted(await approvals.submit(save(await Runner.run(agent, "Delete a.txt"))))


async def resume_async(timeout: float | None) -> None:
    state = await RunState.from_string(agent, STATE.read_text())
    try:
        await approvals.resolve(state, timeout=timeout)
    except StillPending as pending:
        still_pending(pending)
    print(json.dumps({"output": (await Runner.run(agent, state)).final_output}))


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
