"""An OpenAI Agents SDK program whose `delete_file` tool needs approval, answered by Airlock.

    start             run until the tool's interruption, post it to Airlock, save the RunState, exit
    resume [SECONDS]  load the RunState, apply the decisions (waiting SECONDS at most), finish
    run               both in one process, waiting as long as it takes

The tool appends each call it runs to $APP_RAN, so a test counts runs across processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from agents import Agent, OpenAIChatCompletionsModel, Runner, RunState, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

from airlock_client import Airlock, AirlockError, StillPending
from airlock_client.openai_agents import OpenAIAgentsApprovals

STATE = Path(os.environ["APP_STATE"])
RAN = Path(os.environ["APP_RAN"])
set_tracing_disabled(True)


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete the file at `path`."""
    with RAN.open("a") as ran:
        ran.write(json.dumps({"path": path}) + "\n")
    return f"deleted {path}"


airlock = Airlock("openai-agents-app", data_dir=os.environ["AIRLOCK_DATA_DIR"])
approvals = OpenAIAgentsApprovals(airlock, session=os.environ["APP_SESSION"])
model = OpenAIChatCompletionsModel(
    model="scripted", openai_client=AsyncOpenAI(base_url=os.environ["MODEL_URL"], api_key="test")
)
agent = Agent(name="files", instructions="You manage files.", tools=[delete_file], model=model)


async def start() -> None:
    result = await Runner.run(agent, "Delete a.txt")
    assert result.interruptions, result.final_output
    STATE.write_text(result.to_state().to_string())
    decisions = approvals.submit(result.interruptions)
    print(json.dumps({call_id: d.approval_id for call_id, d in decisions.items()}))


async def resume(timeout: float | None) -> None:
    state = await RunState.from_string(agent, STATE.read_text())
    try:
        approvals.resolve(state, timeout=timeout)
    except StillPending as pending:
        print(pending, file=sys.stderr)
        sys.exit(3)
    result = await Runner.run(agent, state)
    print(json.dumps({"output": result.final_output}))


async def main() -> None:
    command = sys.argv[1]
    try:
        if command == "start":
            await start()
        elif command == "resume":
            await resume(float(sys.argv[2]) if len(sys.argv) > 2 else None)
        elif command == "run":
            await start()
            await resume(None)
    except AirlockError as error:
        print(f"airlock: {error}", file=sys.stderr)
        sys.exit(2)


asyncio.run(main())
