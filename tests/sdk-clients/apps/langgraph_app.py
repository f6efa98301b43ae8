"""A LangChain agent (LangGraph underneath) whose `delete_file` tool is reviewed by
HumanInTheLoopMiddleware, answered by Airlock.

    start             run until the middleware's interrupt, post its calls to Airlock, exit
                      (the checkpoint stays in $APP_STATE, a SQLite file)
    resume [SECONDS]  answer the interrupt with Airlock's decisions (waiting SECONDS at most),
                      finish the run; on a copy of the checkpoint, so resuming twice starts
                      from the same saved state (as a program that crashed before saving would)
    run               both in one process, waiting as long as it takes

$APP_MODE picks the client: `sync` (Airlock, `invoke`, SqliteSaver; the default) or `async`
(AsyncAirlock, `ainvoke`, AsyncSqliteSaver). The program's own token is in $AIRLOCK_TOKEN. The
tool appends each call it runs to $APP_RAN, so a test counts runs across processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import aiosqlite
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from airlock_client import Airlock, AirlockError, AsyncAirlock, StillPending
from airlock_client.langgraph import AsyncLangGraphApprovals, LangGraphApprovals

STATE = Path(os.environ["APP_STATE"])
RAN = Path(os.environ["APP_RAN"])
SESSION = os.environ["APP_SESSION"]
CONFIG: Any = {"configurable": {"thread_id": SESSION}}
ASYNC = os.environ.get("APP_MODE", "sync") == "async"
PROMPT = {"messages": [{"role": "user", "content": "Delete a.txt"}]}


@tool
def delete_file(path: str) -> str:
    """Delete the file at `path`."""
    with RAN.open("a") as ran:
        ran.write(json.dumps({"path": path}) + "\n")
    return f"deleted {path}"


data_dir = os.environ["AIRLOCK_DATA_DIR"]
approvals: Any = (
    AsyncLangGraphApprovals(AsyncAirlock("langgraph-app", data_dir=data_dir), session=SESSION, tools=[delete_file])
    if ASYNC
    else LangGraphApprovals(Airlock("langgraph-app", data_dir=data_dir), session=SESSION, tools=[delete_file])
)
model = ChatOpenAI(model="scripted", base_url=os.environ["MODEL_URL"], api_key="test")


def agent(saver: Any) -> Any:
    return create_agent(
        model,
        tools=[delete_file],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"delete_file": True})],
        checkpointer=saver,
    )


def working_copy() -> Path:
    """The saved checkpoint, copied: each resume starts from the state saved at the start."""
    working = STATE.with_suffix(".resume")
    shutil.copyfile(STATE, working)
    return working


def posted(decisions: dict[str, Any]) -> None:
    print(json.dumps({key: d.approval_id for key, d in decisions.items()}))


def still_pending(pending: StillPending) -> None:
    print(pending, file=sys.stderr)
    sys.exit(3)


def start_sync(graph: Any) -> None:
    posted(approvals.submit(graph.invoke(PROMPT, CONFIG)["__interrupt__"]))


def resume_sync(graph: Any, timeout: float | None) -> None:
    try:
        command = approvals.resume(graph.get_state(CONFIG).interrupts, timeout=timeout)
    except StillPending as pending:
        still_pending(pending)
    print(json.dumps({"output": str(graph.invoke(command, CONFIG)["messages"][-1].content)}))


async def start_async(graph: Any) -> None:
    posted(await approvals.submit((await graph.ainvoke(PROMPT, CONFIG))["__interrupt__"]))


async def resume_async(graph: Any, timeout: float | None) -> None:
    try:
        command = await approvals.resume((await graph.aget_state(CONFIG)).interrupts, timeout=timeout)
    except StillPending as pending:
        still_pending(pending)
    print(json.dumps({"output": str((await graph.ainvoke(command, CONFIG))["messages"][-1].content)}))


async def main_async(command: str, timeout: float | None) -> None:
    checkpoint = working_copy() if command == "resume" else STATE
    async with aiosqlite.connect(checkpoint) as connection:
        graph = agent(AsyncSqliteSaver(connection))
        if command in ("start", "run"):
            await start_async(graph)
        if command in ("resume", "run"):
            await resume_async(graph, timeout)


def main_sync(command: str, timeout: float | None) -> None:
    checkpoint = working_copy() if command == "resume" else STATE
    graph = agent(SqliteSaver(sqlite3.connect(checkpoint, check_same_thread=False)))
    if command in ("start", "run"):
        start_sync(graph)
    if command in ("resume", "run"):
        resume_sync(graph, timeout)


def main() -> None:
    command = sys.argv[1]
    timeout = float(sys.argv[2]) if len(sys.argv) > 2 else None
    try:
        if ASYNC:
            asyncio.run(main_async(command, timeout))
        else:
            main_sync(command, timeout)
    except AirlockError as error:
        print(f"airlock: {error}", file=sys.stderr)
        sys.exit(2)


main()
