"""A PydanticAI program whose `delete_file` tool asks Airlock first.

    start             run until the tool needs approval, post it to Airlock, save the run, exit
    resume [SECONDS]  collect the decisions (waiting SECONDS at most), finish the run, print it
    run               both in one process, waiting as long as it takes

The tool appends each call it runs to $APP_RAN, so a test counts runs across processes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from pydantic import TypeAdapter
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.toolsets import FunctionToolset

from airlock_client import AirlockError, StillPending
from airlock_client import Airlock
from airlock_client.pydantic_ai import PydanticAIApprovals

STATE = Path(os.environ["APP_STATE"])
RAN = Path(os.environ["APP_RAN"])
REQUESTS = TypeAdapter(DeferredToolRequests)


def delete_file(path: str) -> str:
    """Delete the file at `path`."""
    with RAN.open("a") as ran:
        ran.write(json.dumps({"path": path}) + "\n")
    return f"deleted {path}"


airlock = Airlock("pydantic-app", data_dir=os.environ["AIRLOCK_DATA_DIR"])
approvals = PydanticAIApprovals(airlock, session=os.environ["APP_SESSION"])
model = OpenAIChatModel("scripted", provider=OpenAIProvider(base_url=os.environ["MODEL_URL"], api_key="test"))
agent = Agent(
    model,
    toolsets=[approvals.toolset(FunctionToolset([delete_file]))],
    output_type=[str, DeferredToolRequests],
)


def start() -> tuple[bytes, DeferredToolRequests]:
    result = agent.run_sync("Delete a.txt")
    assert isinstance(result.output, DeferredToolRequests), result.output
    STATE.write_text(
        json.dumps(
            {
                "messages": json.loads(result.all_messages_json()),
                "requests": json.loads(REQUESTS.dump_json(result.output)),
            }
        )
    )
    decisions = approvals.submit(result.output)
    print(json.dumps({call_id: d.approval_id for call_id, d in decisions.items()}))
    return result.all_messages_json(), result.output


def resume(timeout: float | None) -> None:
    saved = json.loads(STATE.read_text())
    messages = ModelMessagesTypeAdapter.validate_python(saved["messages"])
    requests = REQUESTS.validate_python(saved["requests"])
    try:
        results = approvals.resolve(requests, timeout=timeout)
    except StillPending as pending:
        print(pending, file=sys.stderr)
        sys.exit(3)
    result = agent.run_sync(message_history=messages, deferred_tool_results=results)
    print(json.dumps({"output": result.output}))


def main() -> None:
    command = sys.argv[1]
    try:
        if command == "start":
            start()
        elif command == "resume":
            resume(float(sys.argv[2]) if len(sys.argv) > 2 else None)
        elif command == "run":
            start()
            resume(None)
    except AirlockError as error:
        print(f"airlock: {error}", file=sys.stderr)
        sys.exit(2)


main()
