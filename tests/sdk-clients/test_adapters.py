"""Each adapter of airlock_client with its real SDK (pinned in requirements.txt), against a real
engine and the scripted model. Each app (tests/sdk-clients/apps) is its own process and exits
between its steps, as a real program may while a person decides, and speaks with a token issued
for it (`airlock agents token NAME`), never the main one. The Python adapters run in the flavour
their SDK is built around (async for PydanticAI and the OpenAI Agents SDK, sync for LangGraph);
the other flavour runs the approval, edit, resume and waiting tests too."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class Adapter:
    app: str
    client: str
    #: Whether the SDK can run a person's edited arguments.
    edits: bool
    #: The app's $APP_MODE: its client's flavour, `sync` or `async` (none: it has one).
    mode: str | None = None

    @property
    def name(self) -> str:
        return self.app.split("_app.")[0] + (f"-{self.mode}" if self.mode else "")


ADAPTERS = [
    Adapter("pydantic_ai_app.py", "pydantic-app", edits=True, mode="async"),
    Adapter("openai_agents_app.py", "openai-agents-app", edits=False, mode="async"),
    Adapter("langgraph_app.py", "langgraph-app", edits=True, mode="sync"),
    Adapter("ai_sdk_app.mjs", "ai-sdk-app", edits=False),
]
#: Each Python adapter's other flavour.
OTHER_FLAVOURS = [
    Adapter("pydantic_ai_app.py", "pydantic-app", edits=True, mode="sync"),
    Adapter("openai_agents_app.py", "openai-agents-app", edits=False, mode="sync"),
    Adapter("langgraph_app.py", "langgraph-app", edits=True, mode="async"),
]
CALL = {"path": "a.txt"}


@pytest.fixture(params=ADAPTERS, ids=lambda a: a.name)
def adapter(request) -> Adapter:
    return request.param


@pytest.fixture(params=ADAPTERS + OTHER_FLAVOURS, ids=lambda a: a.name)
def flavour(request) -> Adapter:
    """Every adapter in each flavour of its client."""
    return request.param


def test_approved_the_tool_runs(flavour, engine, model_factory, app_factory):
    adapter = flavour
    app = app_factory(adapter.app, model_factory("delete_file", CALL), adapter.client, adapter.mode)
    posted = json.loads(app.run("start").stdout)
    [item] = engine.waiting()
    assert list(posted.values()) == [item["approval_id"]]
    assert (item["server"], item["tool"], item["args"]) == (adapter.client, "delete_file", CALL)
    assert item["input_schema"]["properties"]["path"]["type"] == "string", item
    assert ("edit" in item["available_decisions"]) == adapter.edits
    assert app.runs() == [], "ran before anyone decided"
    engine.approve(item["approval_id"])
    app.run("resume", "30")
    assert app.runs() == [CALL]
    # Listed among the agents by its name with its own token (`airlock agents`, as Settings →
    # Agents).
    listed = [line.split() for line in engine.cli("agents").splitlines()]
    mine = [line for line in listed if line[:4] == [adapter.client, "program", "last:", "delete_file"]]
    assert mine and "own token since" in " ".join(mine[0]), listed


def test_denied_with_a_reason_the_model_reads_it_and_nothing_runs(adapter, engine, model_factory, app_factory):
    model = model_factory("delete_file", CALL)
    app = app_factory(adapter.app, model, adapter.client, adapter.mode)
    app.run("start")
    [item] = engine.waiting()
    engine.deny(item["approval_id"], "keep a.txt, it is the only copy")
    app.run("resume", "30")
    assert app.runs() == []
    assert "keep a.txt, it is the only copy" in json.dumps(model.requests()[-1])


def test_edited_the_edited_arguments_run_where_the_sdk_can(flavour, engine, model_factory, app_factory):
    adapter = flavour
    app = app_factory(adapter.app, model_factory("delete_file", CALL), adapter.client, adapter.mode)
    app.run("start")
    [item] = engine.waiting()
    if not adapter.edits:
        # The SDK cannot run an edit: the inbox offers none and the engine refuses one.
        refused = subprocess.run(
            [str(engine.bin), "--data-dir", str(engine.data_dir), "approve", item["approval_id"], "--args", '{"path": "b.txt"}'],
            capture_output=True,
            text=True,
        )
        assert refused.returncode == 1, refused.stdout
        assert "cannot run an edited input" in refused.stderr, refused.stderr
        return
    engine.approve(item["approval_id"], {"path": "b.txt"})
    app.run("resume", "30")
    assert app.runs() == [{"path": "b.txt"}]


def test_the_decision_made_while_the_app_was_gone_applies_exactly_once(flavour, engine, model_factory, app_factory):
    adapter = flavour
    model = model_factory("delete_file", CALL)
    app = app_factory(adapter.app, model, adapter.client, adapter.mode)
    app.run("start")
    [item] = engine.waiting()
    # Not decided yet: the app comes back, finds it pending, and leaves again (exit 3).
    still = app.run("resume", "0", check=False)
    assert still.returncode == 3, still.stderr
    assert "still wait" in still.stderr
    # The engine restarts while the app is gone; the item stays and is approved meanwhile.
    engine.stop()
    engine.start()
    engine.approve(item["approval_id"])
    app.run("resume", "30")
    assert app.runs() == [CALL]
    # The app resumes once more from the same saved state (as if it crashed before saving its
    # progress): the approval does not run the tool a second time, and the model is told why.
    app.run("resume", "30")
    assert app.runs() == [CALL]
    assert "not run twice" in json.dumps(model.requests()[-1])
    claims = [row for row in engine.audit() if row["action"] == "agent_call_claimed"]
    assert len(claims) == 1, claims


def test_a_person_deciding_while_the_app_waits_answers_it(flavour, engine, model_factory, app_factory):
    """The app waits on its call's event stream; the decision reaches it when it is made."""
    adapter = flavour
    app = app_factory(adapter.app, model_factory("delete_file", CALL), adapter.client, adapter.mode)
    running = app.start_background("run")
    try:
        [item] = engine.waiting()
        engine.approve(item["approval_id"])
        _, err = running.communicate(timeout=60)
    finally:
        running.kill()
    assert running.returncode == 0, err
    assert app.runs() == [CALL]


def test_no_engine_a_clear_error_and_nothing_runs(adapter, engine, model_factory, app_factory):
    app = app_factory(adapter.app, model_factory("delete_file", CALL), adapter.client, adapter.mode)
    engine.stop()
    done = app.run("run", check=False)
    assert done.returncode == 2, done.stderr
    assert "Airlock is not running" in done.stderr, done.stderr
    assert app.runs() == []


def test_without_its_own_token_a_clear_error_and_nothing_runs(adapter, engine, model_factory, app_factory):
    """The clients never fall back to the main API token: without the program's own, they
    refuse before anything reaches Airlock."""
    app = app_factory(adapter.app, model_factory("delete_file", CALL), adapter.client, adapter.mode)
    del app.env["AIRLOCK_TOKEN"]
    done = app.run("run", check=False)
    assert done.returncode == 2, done.stderr
    assert f"no token of {adapter.client}'s own" in done.stderr, done.stderr
    assert f"airlock agents token {adapter.client}" in done.stderr, done.stderr
    assert app.runs() == []
    assert engine.inbox() == []


def test_a_revoked_token_is_refused_and_nothing_runs(adapter, engine, model_factory, app_factory):
    app = app_factory(adapter.app, model_factory("delete_file", CALL), adapter.client, adapter.mode)
    engine.cli("agents", "revoke", adapter.client)
    done = app.run("run", check=False)
    assert done.returncode == 2, done.stderr
    assert "HTTP 401" in done.stderr, done.stderr
    assert app.runs() == []
    assert engine.inbox() == []
