"""What the approval clients' tests run against: a real `airlock serve` on a fresh data
directory, the project's scripted OpenAI-compatible model (`airlock-scripted-model`) on
127.0.0.1, and the person's side through the `airlock` command (inbox, approve, deny).

The binaries are found in $AIRLOCK_BIN_DIR, else $CARGO_TARGET_DIR/debug, else target/debug;
a missing one fails the test with the command that builds it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = Path(__file__).resolve().parent / "apps"
TS_APPS = ROOT / "clients" / "typescript" / "test"
BUILD = "cargo build -p airlock-cli -p airlock-testkit --bins"


def binary(name: str) -> Path:
    for folder in (
        os.environ.get("AIRLOCK_BIN_DIR"),
        os.environ.get("CARGO_TARGET_DIR") and str(Path(os.environ["CARGO_TARGET_DIR"]) / "debug"),
        str(ROOT / "target" / "debug"),
    ):
        if folder and (Path(folder) / name).is_file():
            return Path(folder) / name
    pytest.fail(f"{name} is not built: run `{BUILD}` (or set AIRLOCK_BIN_DIR)")


def wait_until(what: str, check: Callable[[], Any], limit: float = 30.0) -> Any:
    """Polls `check` until it returns something truthy; fails naming `what` after `limit`."""
    deadline = time.monotonic() + limit
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


class Engine:
    """A running `airlock serve` and the person in front of it (the `airlock` command)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.bin = binary("airlock")
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        (self.data_dir / "api.json").unlink(missing_ok=True)
        self.process = subprocess.Popen(
            [str(self.bin), "--data-dir", str(self.data_dir), "serve", "--workspace", str(self.data_dir / "workspace")],
            stdout=subprocess.DEVNULL,
        )
        wait_until("airlock serve to start", lambda: (self.data_dir / "api.json").exists() and (self.data_dir / "api.sock").exists())

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            [str(self.bin), "--data-dir", str(self.data_dir), *args], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, f"airlock {' '.join(args)}: {done.stderr}"
        return done.stdout

    def inbox(self) -> list[dict[str, Any]]:
        return json.loads(self.cli("inbox", "--json"))

    def waiting(self, count: int = 1) -> list[dict[str, Any]]:
        return wait_until(f"{count} item(s) in the inbox", lambda: (lambda items: items if len(items) >= count else None)(self.inbox()))

    def approve(self, approval_id: str, args: dict[str, Any] | None = None) -> None:
        extra = ["--args", json.dumps(args)] if args is not None else []
        self.cli("approve", approval_id, *extra)

    def token(self, client: str) -> str:
        """A new token of the program's own (`airlock agents token NAME`: its last line)."""
        return self.cli("agents", "token", client).strip().splitlines()[-1]

    def deny(self, approval_id: str, reason: str) -> None:
        self.cli("deny", approval_id, "--reason", reason)

    def audit(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.cli("audit", "--json", "--limit", "1000").splitlines() if line.strip()]


class Model:
    """The scripted model: every request whose last message is the user's gets a call to
    `tool` with `args`, every other request the text "done"."""

    def __init__(self, tool: str, args: dict[str, Any]) -> None:
        self.process = subprocess.Popen(
            [str(binary("airlock-scripted-model")), "--tool", tool, "--args", json.dumps(args)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        assert self.base_url.startswith("http://127.0.0.1:"), self.base_url

    def requests(self) -> list[dict[str, Any]]:
        root = self.base_url.removesuffix("/v1")
        return httpx.get(f"{root}/testkit/requests", timeout=10).json()

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    running = Engine(tmp_path / "airlock")
    running.start()
    yield running
    running.stop()


@pytest.fixture
def model_factory() -> Iterator[Callable[[str, dict[str, Any]], Model]]:
    started: list[Model] = []

    def start(tool: str, args: dict[str, Any]) -> Model:
        model = Model(tool, args)
        started.append(model)
        return model

    yield start
    for model in started:
        model.stop()


class App:
    """One of tests/sdk-clients/apps as its own process: it exits between its steps, as a real
    program may while a person decides. It speaks with its own token ($AIRLOCK_TOKEN), never the
    main one; $APP_MODE picks its client's flavour (sync or async) where it has both."""

    def __init__(self, script: str, data_dir: Path, model: Model, work: Path, token: str, mode: str | None) -> None:
        # The TypeScript app lives in its package, where `airlock-client` and `ai` resolve.
        self.script = TS_APPS / script if script.endswith(".mjs") else APPS / script
        self.command = ["node"] if script.endswith(".mjs") else [sys.executable]
        self.state = work / "state.json"
        self.ran = work / "ran.jsonl"
        self.env = {
            **os.environ,
            "AIRLOCK_DATA_DIR": str(data_dir),
            "MODEL_URL": model.base_url,
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "test-key",
            "APP_STATE": str(self.state),
            "APP_RAN": str(self.ran),
            "APP_SESSION": f"run-{uuid.uuid4().hex[:8]}",
            "OPENAI_AGENTS_DISABLE_TRACING": "1",
            "AIRLOCK_TOKEN": token,
        }
        if mode is not None:
            self.env["APP_MODE"] = mode

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*self.command, str(self.script), *args], env=self.env, capture_output=True, text=True, timeout=120
        )
        if check:
            assert done.returncode == 0, f"{self.script.name} {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        return done

    def start_background(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*self.command, str(self.script), *args], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def runs(self) -> list[dict[str, Any]]:
        """What the tool did, in order (each run of it appends a line)."""
        if not self.ran.exists():
            return []
        return [json.loads(line) for line in self.ran.read_text().splitlines() if line.strip()]


@pytest.fixture
def app_factory(engine: Engine, tmp_path: Path) -> Callable[..., App]:
    """`make(script, model, client, mode=None)`: the app, with a token issued for `client`."""

    def make(script: str, model: Model, client: str, mode: str | None = None) -> App:
        work = tmp_path / f"app-{uuid.uuid4().hex[:6]}"
        work.mkdir()
        return App(script, engine.data_dir, model, work, engine.token(client), mode)

    return make
