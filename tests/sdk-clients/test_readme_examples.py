"""README.md's "Use it from your own agent" examples, run as written against a running Airlock
and the scripted model (its address in OPENAI_BASE_URL), with a person approving each call the
example asks about, each with a token issued for its program (`airlock agents token NAME`) in
AIRLOCK_TOKEN. The Python ones run in the SDK tests' venv, the JavaScript one with node
from clients/typescript (so `airlock-client` resolves to that package, built)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

README = (ROOT / "README.md").read_text()


def example(name: str) -> tuple[str, str]:
    found = re.search(rf"<!-- example: {re.escape(name)} -->\n```(\w+)\n(.*?)```", README, re.S)
    assert found, f"README.md has no example '{name}'"
    return found.group(1), found.group(2)


EXAMPLES = {
    "pydantic-ai": "my-pydantic-app",
    "openai-agents": "my-openai-agent",
    "langgraph": "my-langgraph-agent",
    "ai-sdk": "my-ai-sdk-app",
}


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_readme_example_runs_as_written(name, engine, model_factory, tmp_path):
    language, code = example(name)
    model = model_factory("delete_file", {"path": "a.txt"})
    env = {
        **os.environ,
        "AIRLOCK_DATA_DIR": str(engine.data_dir),
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_API_KEY": "test-key",
        "OPENAI_AGENTS_DISABLE_TRACING": "1",
        # As the README says: the program's own token, issued for its name.
        "AIRLOCK_TOKEN": engine.token(EXAMPLES[name]),
    }
    if language == "python":
        script = tmp_path / "example.py"
        script.write_text(code)
        command, cwd = [sys.executable, str(script)], tmp_path
    else:
        package = ROOT / "clients" / "typescript"
        script = package / f".readme-example-{os.getpid()}.mjs"
        script.write_text(code)
        command, cwd = ["node", str(script)], package
    decided: list[dict] = []

    def person() -> None:
        [item] = engine.waiting()
        decided.append(item)
        engine.approve(item["approval_id"])

    approving = threading.Thread(target=person, daemon=True)
    approving.start()
    try:
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    finally:
        if language != "python":
            script.unlink(missing_ok=True)
    approving.join(30)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert decided and decided[0]["server"] == EXAMPLES[name], decided
    assert decided[0]["tool"] == "delete_file"
    # The tool ran and its result reached the model.
    assert "deleted a.txt" in json.dumps(model.requests()[-1])
    assert done.stdout.strip() == "done"
