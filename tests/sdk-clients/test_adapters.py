"""Each adapter of airlock_client with its real SDK (pinned in requirements.txt), against a real
engine and the scripted model. Each app (tests/sdk-clients/apps) is its own process and exits
between its steps, as a real program may while a person decides."""

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


ADAPTERS = [
    Adapter("pydantic_ai_app.py", "pydantic-app", edits=True),
    Adapter("openai_agents_app.py", "openai-agents-app", edits=False),
    Adapter("langgraph_app.py", "langgraph-app", edits=True),
    Adapter("ai_sdk_app.mjs", "ai-sdk-app", edits=False),
]
CALL = {"path": "a.txt"}


@pytest.fixture(params=ADAPTERS, ids=lambda a: a.app.split("_app.")[0])
def adapter(request) -> Adapter:
    return request.param


def test_approved_the_tool_runs(adapter, engine, model_factory, app_factory):
    app = app_factory(adapter.app, model_factory("delete_file", CALL))
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
    # Listed among the agents by its name (`airlock agents`, as Settings → Agents).
    listed = [line.split() for line in engine.cli("agents").splitlines()]
    assert [adapter.client, "program", "last:", "delete_file"] in [line[:4] for line in listed], listed


def test_denied_with_a_reason_the_model_reads_it_and_nothing_runs(adapter, engine, model_factory, app_factory):
    model = model_factory("delete_file", CALL)
    app = app_factory(adapter.app, model)
    app.run("start")
    [item] = engine.waiting()
    engine.deny(item["approval_id"], "keep a.txt, it is the only copy")
    app.run("resume", "30")
    assert app.runs() == []
    assert "keep a.txt, it is the only copy" in json.dumps(model.requests()[-1])


def test_edited_the_edited_arguments_run_where_the_sdk_can(adapter, engine, model_factory, app_factory):
    app = app_factory(adapter.app, model_factory("delete_file", CALL))
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


def test_the_decision_made_while_the_app_was_gone_applies_exactly_once(adapter, engine, model_factory, app_factory):
    model = model_factory("delete_file", CALL)
    app = app_factory(adapter.app, model)
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


def test_a_person_deciding_while_the_app_waits_answers_it(adapter, engine, model_factory, app_factory):
    app = app_factory(adapter.app, model_factory("delete_file", CALL))
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
    app = app_factory(adapter.app, model_factory("delete_file", CALL))
    engine.stop()
    done = app.run("run", check=False)
    assert done.returncode == 2, done.stderr
    assert "Airlock is not running" in done.stderr, done.stderr
    assert app.runs() == []
