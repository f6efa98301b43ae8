"""The local API's agents' path, as a program of one's own uses it.

A call is posted in the deferred style (``POST /v1/agent-calls`` with ``defer``): the policy may
answer at once (allowed, or denied with the reason), else the call waits in Airlock's inbox and
its id comes back at once. Its decision is awaited on the call's event stream
(``GET /v1/agent-calls/{id}/events``: its state at once, then the decision the moment a person
makes it, one connection, no polling), read by id (``GET /v1/agent-calls/{id}?wait_ms=N``, a long
poll) or found by posting the same call again (same session and tool-call id), also after the
program exited and came back. Reading a decision twice gives the same decision.

Running an approved call is the program's, and happens at most once: :meth:`Airlock.claim`
claims it just before it runs. A second claim (the program resumed from state saved before it
ran, or a second copy of it) is refused, so the tool is not run twice — and if the program dies
between the claim and the run, the call is not run at all. At most once, never twice.

The program speaks with a token of its own (``airlock agents token NAME``), not the engine's
main API token: it can post its calls and read their decisions, nothing else.

:class:`Airlock` is synchronous (``httpx.Client``), :class:`AsyncAirlock` the same for asyncio
(``httpx.AsyncClient``); everything but the I/O is shared.
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
#: One long poll's length (:meth:`Airlock.decision`'s callers may pass less).
POLL_MS = 25_000
#: How long the event stream may stay silent: the engine sends a keep-alive every 15 s.
STREAM_READ_TIMEOUT = 60.0
#: Where the program's own token is read from when none is given.
TOKEN_ENV = "AIRLOCK_TOKEN"


class AirlockError(Exception):
    """Airlock could not answer: nothing was approved, so nothing may run."""

    #: The engine's code for a refusal (``not_allowed``, ``already_decided``…), when it gave one.
    code: str | None = None


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


def already_ran(decision: Decision) -> str:
    """What the model reads for an approved call that was claimed before (it is not run again)."""
    return (
        f"Airlock: this call was approved and already claimed to run at {decision.claimed_at or 'an earlier time'}"
        " by an earlier run of this program; it is not run twice."
    )


def raise_if_pending(decisions: Mapping[str, Decision]) -> None:
    """:class:`StillPending` naming the calls nobody decided yet, if any."""
    pending = [d.approval_id or key for key, d in decisions.items() if d.pending]
    if pending:
        raise StillPending(pending)


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


@dataclass(frozen=True)
class _Endpoint:
    base_url: str
    token: str
    #: The engine's Unix socket, when it is reached through one.
    socket: str | None = None


class _EventStream:
    """Reads a call's event stream (server-sent events) line by line: each ``state`` event is
    a :class:`Decision`; an ``error`` event is a refusal."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []

    def line(self, line: str) -> Decision | None:
        """Takes one line; returns the decision an event ends with, if it is a state."""
        if line == "":
            event, data = self._event, "\n".join(self._data)
            self._event, self._data = "", []
            if event == "error":
                body = _json_object(data)
                error = AirlockError(f"Airlock refused: {body.get('error') or data}")
                error.code = body.get("code")
                raise error
            if event == "state":
                return Decision.from_json(_json_object(data))
            return None
        if line.startswith(":"):
            return None  # a keep-alive
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {"error": text}
    return value if isinstance(value, dict) else {"error": text}


class _Base:
    """What :class:`Airlock` and :class:`AsyncAirlock` share: finding the engine and the token,
    the requests' bodies and reading the answers."""

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

    def _endpoint(self) -> _Endpoint:
        socket = None
        if self._base_url is not None:
            base_url = self._base_url
        else:
            data_dir = self._data_dir or default_data_dir()
            not_running = EngineUnavailable(
                f"Airlock is not running for {data_dir} (start the app, or `airlock serve`); "
                "nothing was approved"
            )
            try:
                endpoint = json.loads((data_dir / "api.json").read_text())
            except (OSError, ValueError):
                raise not_running from None
            pid = endpoint.get("pid")
            if isinstance(pid, int) and not _pid_alive(pid):
                raise not_running
            path = data_dir / "api.sock"
            if endpoint.get("socket") and sys.platform != "win32" and path.exists():
                base_url, socket = "http://airlock", str(path)
            else:
                base_url = f"http://{endpoint['addr']}"
        token = self._token or os.environ.get(TOKEN_ENV)
        if not token:
            raise AirlockError(
                f"no token of {self.client}'s own: issue one with `airlock agents token {self.client}` "
                f"(Settings → Agents) and give it as token=... or ${TOKEN_ENV}; nothing was approved"
            )
        return _Endpoint(base_url=base_url, token=token, socket=socket)

    def _headers(self, endpoint: _Endpoint) -> dict[str, str]:
        return {"Authorization": f"Bearer {endpoint.token}"}

    def _request_body(
        self,
        *,
        session: str,
        tool: str,
        args: Mapping[str, Any],
        tool_call_id: str,
        schema: Mapping[str, Any] | None,
        description: str | None,
        editable: bool,
        takes_reason: bool,
        cwd: str | None,
        wait_ms: int,
    ) -> dict[str, Any]:
        definition: dict[str, Any] | None = None
        if schema is not None or description is not None:
            definition = {"description": description, "input_schema": schema}
        return {
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

    @staticmethod
    def _unreachable(error: Exception) -> EngineUnavailable:
        return EngineUnavailable(
            f"Airlock is not running or cannot be reached ({error}); nothing was approved"
        )

    @staticmethod
    def _refusal(status: int, text: str) -> AirlockError:
        body = _json_object(text)
        error = AirlockError(f"Airlock refused: {body.get('message') or body.get('error') or text} (HTTP {status})")
        error.code = body.get("code")
        return error

    def _answer(self, response: httpx.Response) -> dict[str, Any]:
        if response.status_code >= 400:
            raise self._refusal(response.status_code, response.text)
        return _json_object(response.text)

    @staticmethod
    def _events_path(approval_id: str, left_ms: int | None) -> tuple[str, dict[str, int]]:
        return f"/v1/agent-calls/{approval_id}/events", ({} if left_ms is None else {"wait_ms": left_ms})

    @staticmethod
    def _left_ms(deadline: float | None) -> int | None:
        if deadline is None:
            return None
        return max(0, int((deadline - time.monotonic()) * 1000))

    def _stream_timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self._timeout, read=STREAM_READ_TIMEOUT)

    @staticmethod
    def _refusal_to_run(decision: Decision) -> str | None:
        """The denial the model reads, or ``None`` for an allowed call (still to be claimed)."""
        return None if decision.allowed else decision.denial_message


class Airlock(_Base):
    """A program's connection to the Airlock engine's local API.

    ``client`` is the program's name: it appears in Settings → Agents, and its tools are named
    ``CLIENT/TOOL`` in Airlock's settings and rules. ``token`` is the program's own token
    (``airlock agents token CLIENT``; default: ``$AIRLOCK_TOKEN``): it posts this program's
    calls and reads their decisions, nothing else. ``base_url`` reaches the engine over TCP
    (``http://127.0.0.1:PORT``); without it the client finds the engine of ``data_dir``
    (default: as the ``airlock`` command does) and, on Unix, talks over its socket inside that
    private folder. For asyncio, :class:`AsyncAirlock` is the same.
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
        super().__init__(client, token=token, base_url=base_url, data_dir=data_dir, timeout=timeout)
        self._http: httpx.Client | None = None

    # -- connection -------------------------------------------------------------------------

    def _connect(self) -> httpx.Client:
        if self._http is None:
            endpoint = self._endpoint()
            transport = httpx.HTTPTransport(uds=endpoint.socket) if endpoint.socket else None
            self._http = httpx.Client(
                transport=transport,
                base_url=endpoint.base_url,
                headers=self._headers(endpoint),
                timeout=self._timeout,
            )
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> Airlock:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(self, method: str, path: str, *, wait_ms: int = 0, **kwargs: Any) -> dict[str, Any]:
        http = self._connect()
        try:
            response = http.request(method, path, timeout=self._timeout + wait_ms / 1000, **kwargs)
        except httpx.TransportError as error:
            raise self._unreachable(error) from error
        return self._answer(response)

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
        body = self._request_body(
            session=session, tool=tool, args=args, tool_call_id=tool_call_id, schema=schema,
            description=description, editable=editable, takes_reason=takes_reason, cwd=cwd,
            wait_ms=wait_ms,
        )
        return Decision.from_json(self._send("POST", "/v1/agent-calls", json=body, wait_ms=wait_ms))

    def decision(self, approval_id: str, *, wait_ms: int = 0) -> Decision:
        """The call's decision, waiting up to ``wait_ms`` while nobody decided (a long poll;
        still pending after that)."""
        return Decision.from_json(
            self._send(
                "GET", f"/v1/agent-calls/{approval_id}", params={"wait_ms": wait_ms}, wait_ms=wait_ms
            )
        )

    def wait(self, decision: Decision, *, timeout: float | None = None) -> Decision:
        """Waits on the call's event stream for a pending decision (``timeout`` seconds at most;
        ``None``: as long as it takes) and returns it; still pending at the deadline, it comes
        back pending."""
        if not decision.pending or decision.approval_id is None:
            return decision
        deadline = None if timeout is None else time.monotonic() + timeout
        http = self._connect()
        while True:
            path, params = self._events_path(decision.approval_id, self._left_ms(deadline))
            events = _EventStream()
            try:
                with http.stream("GET", path, params=params, timeout=self._stream_timeout()) as response:
                    if response.status_code >= 400:
                        raise self._refusal(response.status_code, response.read().decode(errors="replace"))
                    for line in response.iter_lines():
                        decision = events.line(line) or decision
            except httpx.TransportError as error:
                raise self._unreachable(error) from error
            if not decision.pending or (deadline is not None and time.monotonic() >= deadline):
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
            if error.code == "already_decided":
                return False
            raise
        return True

    def refusal_to_run(self, decision: Decision) -> str | None:
        """``None`` when this run may run the call now (approved, and claimed for this run by
        this call); else what the model reads instead: the denial's reason, or that an earlier
        run claimed it (:func:`already_ran`)."""
        refused = self._refusal_to_run(decision)
        if refused is not None or self.claim(decision):
            return refused
        return already_ran(self.decision(decision.approval_id) if decision.approval_id else decision)


class AsyncAirlock(_Base):
    """:class:`Airlock` for asyncio (``httpx.AsyncClient``): the same methods, awaited."""

    def __init__(
        self,
        client: str,
        *,
        token: str | None = None,
        base_url: str | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        timeout: float = 10.0,
    ) -> None:
        super().__init__(client, token=token, base_url=base_url, data_dir=data_dir, timeout=timeout)
        self._http: httpx.AsyncClient | None = None

    def _connect(self) -> httpx.AsyncClient:
        if self._http is None:
            endpoint = self._endpoint()
            transport = httpx.AsyncHTTPTransport(uds=endpoint.socket) if endpoint.socket else None
            self._http = httpx.AsyncClient(
                transport=transport,
                base_url=endpoint.base_url,
                headers=self._headers(endpoint),
                timeout=self._timeout,
            )
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> AsyncAirlock:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def _send(self, method: str, path: str, *, wait_ms: int = 0, **kwargs: Any) -> dict[str, Any]:
        http = self._connect()
        try:
            response = await http.request(method, path, timeout=self._timeout + wait_ms / 1000, **kwargs)
        except httpx.TransportError as error:
            raise self._unreachable(error) from error
        return self._answer(response)

    async def request(
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
        """:meth:`Airlock.request`, awaited."""
        body = self._request_body(
            session=session, tool=tool, args=args, tool_call_id=tool_call_id, schema=schema,
            description=description, editable=editable, takes_reason=takes_reason, cwd=cwd,
            wait_ms=wait_ms,
        )
        return Decision.from_json(await self._send("POST", "/v1/agent-calls", json=body, wait_ms=wait_ms))

    async def decision(self, approval_id: str, *, wait_ms: int = 0) -> Decision:
        """:meth:`Airlock.decision`, awaited."""
        return Decision.from_json(
            await self._send(
                "GET", f"/v1/agent-calls/{approval_id}", params={"wait_ms": wait_ms}, wait_ms=wait_ms
            )
        )

    async def wait(self, decision: Decision, *, timeout: float | None = None) -> Decision:
        """:meth:`Airlock.wait`, awaited (on the call's event stream)."""
        if not decision.pending or decision.approval_id is None:
            return decision
        deadline = None if timeout is None else time.monotonic() + timeout
        http = self._connect()
        while True:
            path, params = self._events_path(decision.approval_id, self._left_ms(deadline))
            events = _EventStream()
            try:
                async with http.stream("GET", path, params=params, timeout=self._stream_timeout()) as response:
                    if response.status_code >= 400:
                        text = (await response.aread()).decode(errors="replace")
                        raise self._refusal(response.status_code, text)
                    async for line in response.aiter_lines():
                        decision = events.line(line) or decision
            except httpx.TransportError as error:
                raise self._unreachable(error) from error
            if not decision.pending or (deadline is not None and time.monotonic() >= deadline):
                return decision

    async def claim(self, decision: Decision) -> bool:
        """:meth:`Airlock.claim`, awaited."""
        if decision.approval_id is None:
            return decision.allowed
        try:
            await self._send("POST", f"/v1/agent-calls/{decision.approval_id}/claim")
        except AirlockError as error:
            if error.code == "already_decided":
                return False
            raise
        return True

    async def refusal_to_run(self, decision: Decision) -> str | None:
        """:meth:`Airlock.refusal_to_run`, awaited."""
        refused = self._refusal_to_run(decision)
        if refused is not None or await self.claim(decision):
            return refused
        return already_ran(await self.decision(decision.approval_id) if decision.approval_id else decision)
