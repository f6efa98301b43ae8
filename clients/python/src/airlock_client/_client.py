"""The local API's agents' path, as a program of one's own uses it.

A call is posted in the deferred style (``POST /v1/agent-calls`` with ``defer``): the policy may
answer at once (allowed, or denied with the reason), else the call waits in Airlock's inbox and
its id comes back at once. Its decision is read by id (``GET /v1/agent-calls/{id}?wait_ms=N``,
a long poll) or by posting the same call again (same session and tool-call id), also after the
program exited and came back. Reading a decision twice gives the same decision.

Running an approved call is the program's, and happens at most once: :meth:`Airlock.claim`
claims it just before it runs. A second claim (the program resumed from state saved before it
ran, or a second copy of it) is refused, so the tool is not run twice — and if the program dies
between the claim and the run, the call is not run at all. At most once, never twice.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

import httpx

Verdict = Literal["allow", "deny", "undecided"]

#: The agent kind Airlock knows a program of one's own by; the program's name is its ``client``.
APP_AGENT = "app"
#: One long poll's length: the wait is a series of them, so a dropped connection costs little.
POLL_MS = 25_000


class AirlockError(Exception):
    """Airlock could not answer: nothing was approved, so nothing may run."""


class EngineUnavailable(AirlockError):
    """No Airlock engine runs for the data directory (or at the address) this client was given."""


class StillPending(AirlockError):
    """Nobody decided in the time given. The calls stay in Airlock's inbox: save the run's state
    and ask again later (the same calls find the same items and their decisions)."""

    def __init__(self, pending: list[str]):
        self.pending = pending
        super().__init__(
            f"{len(pending)} call(s) still wait for a decision in Airlock ({', '.join(pending)}); "
            "ask again later with the same calls"
        )


@dataclass(frozen=True)
class Decision:
    """Airlock's answer to one call."""

    verdict: Verdict
    #: The inbox item; ``None`` when the policy answered at once (nothing waited).
    approval_id: str | None = None
    #: The item's status: ``pending``, ``approved``, ``denied``, ``expired``, ``cancelled``,
    #: ``withdrawn``; ``None`` when the policy answered at once.
    status: str | None = None
    #: For a denial, what the model should read.
    reason: str | None = None
    #: The person's edit: run these arguments instead.
    updated_input: dict[str, Any] | None = None
    #: Who decided: ``policy``, ``inbox``, ``api``, ``phone``…
    decided_by: str | None = None
    #: When the approved call was claimed to run (see :meth:`Airlock.claim`).
    claimed_at: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def pending(self) -> bool:
        return self.status == "pending"

    @property
    def allowed(self) -> bool:
        return self.verdict == "allow"

    @property
    def denial_message(self) -> str:
        """The denial's reason as the model reads it."""
        return self.reason or "Denied in Airlock."

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Decision:
        verdict = body.get("verdict")
        if verdict not in ("allow", "deny", "undecided"):
            raise AirlockError(f"Airlock answered something that is not a decision: {body!r}")
        updated = body.get("updated_input")
        return cls(
            verdict=verdict,
            approval_id=body.get("approval_id"),
            status=body.get("status"),
            reason=body.get("reason"),
            updated_input=updated if isinstance(updated, dict) else None,
            decided_by=body.get("decided_by"),
            claimed_at=body.get("claimed_at"),
            raw=dict(body),
        )


def default_data_dir() -> Path:
    """Where Airlock keeps its data: ``$AIRLOCK_DATA_DIR``, else the platform's data folder (as
    the ``airlock`` command finds it)."""
    env = os.environ.get("AIRLOCK_DATA_DIR")
    if env:
        return Path(env)
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "airlock"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", home / "AppData" / "Roaming")) / "airlock"
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else home / ".local" / "share") / "airlock"


def _pid_alive(pid: int) -> bool:
    if sys.platform == "win32":
        return True  # the connection itself tells
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Airlock:
    """A program's connection to the Airlock engine's local API.

    ``client`` is the program's name: it appears in Settings → Agents, and its tools are named
    ``CLIENT/TOOL`` in Airlock's settings and rules. ``token`` is the token to send (an agent
    token of this client's, or the engine's API token, read from the data directory when not
    given). ``base_url`` reaches the engine over TCP (``http://127.0.0.1:PORT``); without it the
    client finds the engine of ``data_dir`` (default: as the ``airlock`` command does) and, on
    Unix, talks over its socket inside that private folder.
    """

    def __init__(
        self,
        client: str,
        *,
        token: str | None = None,
        base_url: str | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        timeout: float = 10.0,
    ) -> None:
        if not client or not client.strip():
            raise ValueError("name the program: Airlock lists it by this name")
        self.client = client
        self._timeout = timeout
        self._token = token
        self._base_url = base_url
        self._data_dir = Path(data_dir) if data_dir is not None else None
        self._http: httpx.Client | None = None

    # -- connection -------------------------------------------------------------------------

    def _connect(self) -> httpx.Client:
        if self._http is not None:
            return self._http
        token = self._token
        if self._base_url is not None:
            if token is None:
                raise AirlockError("a base_url needs its token (token=...)")
            http = httpx.Client(base_url=self._base_url, timeout=self._timeout)
        else:
            data_dir = self._data_dir or default_data_dir()
            not_running = EngineUnavailable(
                f"Airlock is not running for {data_dir} (start the app, or `airlock serve`); "
                "nothing was approved"
            )
            try:
                endpoint = json.loads((data_dir / "api.json").read_text())
                if token is None:
                    token = (data_dir / "token").read_text().strip()
            except (OSError, ValueError):
                raise not_running from None
            pid = endpoint.get("pid")
            if isinstance(pid, int) and not _pid_alive(pid):
                raise not_running
            socket = data_dir / "api.sock"
            if endpoint.get("socket") and sys.platform != "win32" and socket.exists():
                transport = httpx.HTTPTransport(uds=str(socket))
                http = httpx.Client(
                    transport=transport, base_url="http://airlock", timeout=self._timeout
                )
            else:
                http = httpx.Client(base_url=f"http://{endpoint['addr']}", timeout=self._timeout)
        http.headers["Authorization"] = f"Bearer {token}"
        self._http = http
        return http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> Airlock:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(self, method: str, path: str, *, wait_ms: int = 0, **kwargs: Any) -> Any:
        http = self._connect()
        timeout = self._timeout + wait_ms / 1000
        try:
            response = http.request(method, path, timeout=timeout, **kwargs)
        except httpx.TransportError as error:
            raise EngineUnavailable(
                f"Airlock is not running or cannot be reached ({error}); nothing was approved"
            ) from error
        try:
            body = response.json()
        except ValueError:
            body = {"message": response.text}
        if response.status_code >= 400:
            message = body.get("message") or body.get("error") or response.text
            error = AirlockError(f"Airlock refused: {message} (HTTP {response.status_code})")
            error.code = body.get("code")  # type: ignore[attr-defined]
            raise error
        return body

    # -- the calls --------------------------------------------------------------------------

    def request(
        self,
        *,
        session: str,
        tool: str,
        args: Mapping[str, Any],
        tool_call_id: str,
        schema: Mapping[str, Any] | None = None,
        description: str | None = None,
        editable: bool = True,
        takes_reason: bool = True,
        cwd: str | None = None,
        wait_ms: int = 0,
    ) -> Decision:
        """Posts a call in the deferred style: the policy's answer, or the item, pending.

        ``session`` groups the calls of one run or conversation (grants "for this chat" apply
        to it); ``tool_call_id`` is the SDK's id of the call: posting the same call again finds
        the same item and its decision. ``schema`` (the tool's JSON schema for its arguments)
        lets the inbox check an edit; ``editable``: whether this program can run edited
        arguments; ``takes_reason``: whether a denial's reason reaches the model.
        ``wait_ms`` waits that long for a person before answering.
        """
        definition: dict[str, Any] | None = None
        if schema is not None or description is not None:
            definition = {"description": description, "input_schema": schema}
        body = {
            "agent": APP_AGENT,
            "client": self.client,
            "agent_session": session,
            "cwd": cwd,
            "tool": tool,
            "input": dict(args),
            "tool_use_id": tool_call_id,
            "editable": editable,
            "takes_reason": takes_reason,
            "defer": True,
            "wait_ms": wait_ms,
            "definition": definition,
        }
        return Decision.from_json(self._send("POST", "/v1/agent-calls", json=body, wait_ms=wait_ms))

    def decision(self, approval_id: str, *, wait_ms: int = 0) -> Decision:
        """The call's decision, waiting up to ``wait_ms`` while nobody decided (still pending
        after that)."""
        return Decision.from_json(
            self._send(
                "GET", f"/v1/agent-calls/{approval_id}", params={"wait_ms": wait_ms}, wait_ms=wait_ms
            )
        )

    def wait(self, decision: Decision, *, timeout: float | None = None) -> Decision:
        """Waits for a pending decision (``timeout`` seconds at most; ``None``: as long as it
        takes) and returns it; still pending at the deadline, it comes back pending."""
        if not decision.pending or decision.approval_id is None:
            return decision
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left_ms = POLL_MS
            if deadline is not None:
                left_ms = min(POLL_MS, max(0, int((deadline - time.monotonic()) * 1000)))
            decision = self.decision(decision.approval_id, wait_ms=left_ms)
            if not decision.pending:
                return decision
            if deadline is not None and time.monotonic() >= deadline:
                return decision

    def claim(self, decision: Decision) -> bool:
        """Claims an approved call just before running it: True the first time, False when it
        was claimed before (run it not again). A call the policy allowed at once has no item
        and needs no claim."""
        if decision.approval_id is None:
            return decision.allowed
        try:
            self._send("POST", f"/v1/agent-calls/{decision.approval_id}/claim")
        except AirlockError as error:
            if getattr(error, "code", None) == "already_decided":
                return False
            raise
        return True


def already_ran(decision: Decision) -> str:
    """What the model reads for an approved call that was claimed before (it is not run again)."""
    return (
        f"Airlock: this call was approved and already claimed to run at {decision.claimed_at or 'an earlier time'}"
        " by an earlier run of this program; it is not run twice."
    )
