"""A LangChain agent (LangGraph underneath) whose `delete_file` tool is reviewed by
HumanInTheLoopMiddleware, answered by Airlock.

    start             run until the middleware's interrupt, post its calls to Airlock, exit
                      (the checkpoint stays in $APP_STATE, a SQLite file)
    resume [SECONDS]  answer the interrupt with Airlock's decisions (waiting SECONDS at most),
                      finish the run; on a copy of the checkpoint, so resuming twice starts
                      from the same saved state (as a program that crashed before saving would)
    run               both in one process, waiting as long as it takes

The tool appends each call it runs to $APP_RAN, so a test counts runs across processes.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.sqlite import SqliteSaver

from airlock_client import Airlock, AirlockError, StillPending
from airlock_client.langgraph import LangGraphApprovals

STATE = Path(os.environ["APP_STATE"])
RAN = Path(os.environ["APP_RAN"])
SESSION = os.environ["APP_SESSION"]
CONFIG = {"configurable": {"thread_id": SESSION}}


@tool
def delete_file(path: str) -> str:
    """Delete the file at `path`."""
    with RAN.open("a") as ran:
        ran.write(json.dumps({"path": path}) + "\n")
    return f"deleted {path}"


airlock = Airlock("langgraph-app", data_dir=os.environ["AIRLOCK_DATA_DIR"])
approvals = LangGraphApprovals(airlock, session=SESSION, tools=[delete_file])
model = ChatOpenAI(model="scripted", base_url=os.environ["MODEL_URL"], api_key="test")


def agent(checkpoint: Path):
    saver = SqliteSaver(sqlite3.connect(checkpoint, check_same_thread=False))
    return create_agent(
        model,
        tools=[delete_file],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"delete_file": True})],
        checkpointer=saver,
    )


def start():
    graph = agent(STATE)
    result = graph.invoke({"messages": [{"role": "user", "content": "Delete a.txt"}]}, CONFIG)
    interrupts = result["__interrupt__"]
    decisions = approvals.submit(interrupts)
    print(json.dumps({key: d.approval_id for key, d in decisions.items()}))
    return graph


def resume(timeout: float | None, graph=None) -> None:
    if graph is None:
        working = STATE.with_suffix(".resume")
        shutil.copyfile(STATE, working)
        graph = agent(working)
    interrupts = graph.get_state(CONFIG).interrupts
    try:
        command = approvals.resume(interrupts, timeout=timeout)
    except StillPending as pending:
        print(pending, file=sys.stderr)
        sys.exit(3)
    result = graph.invoke(command, CONFIG)
    print(json.dumps({"output": str(result["messages"][-1].content)}))


def main() -> None:
    command = sys.argv[1]
    try:
        if command == "start":
            start()
        elif command == "resume":
            resume(float(sys.argv[2]) if len(sys.argv) > 2 else None)
        elif command == "run":
            resume(None, start())
    except AirlockError as error:
        print(f"airlock: {error}", file=sys.stderr)
        sys.exit(2)


main()
