// The local API's agents' path as a program of one's own uses it (see clients/python's
// _client.py for the same in Python, and README.md's "Use it from your own agent").
//
// A call is posted in the deferred style (`POST /v1/agent-calls` with `defer`): the policy may
// answer at once, else the call waits in Airlock's inbox and its id comes back at once. Its
// decision is awaited on the call's event stream (`GET /v1/agent-calls/{id}/events`: its state
// at once, then the decision the moment a person makes it; one connection, no polling), read by
// id (`GET /v1/agent-calls/{id}?wait_ms=N`, a long poll) or found by posting the same call again
// (same session and tool-call id). Reading a decision twice gives the same decision. Running an
// approved call happens at most once: `claim` claims it just before it runs, and a second claim
// (the program resumed from state saved before it ran) is refused.
//
// The program speaks with a token of its own (`airlock agents token NAME`; `token`, else
// $AIRLOCK_TOKEN), not the engine's main API token: it posts its calls and reads their
// decisions, nothing else.

import { request as httpRequest } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type Verdict = 'allow' | 'deny' | 'undecided';

/** Airlock's answer to one call. */
export interface Decision {
  verdict: Verdict;
  /** The inbox item; none when the policy answered at once. */
  approvalId?: string;
  /** pending, approved, denied, expired, cancelled, withdrawn; none when the policy answered. */
  status?: string;
  /** For a denial, what the model should read. */
  reason?: string;
  /** The person's edit (never offered to this SDK's programs: it cannot run one). */
  updatedInput?: Record<string, unknown>;
  decidedBy?: string;
  /** When the approved call was claimed to run. */
  claimedAt?: string;
}

/** Airlock could not answer: nothing was approved, so nothing may run. */
export class AirlockError extends Error {
  code?: string;
  constructor(message: string, code?: string) {
    super(message);
    this.name = 'AirlockError';
    this.code = code;
  }
}

/** No Airlock engine runs for the data directory (or at the address) given. */
export class EngineUnavailable extends AirlockError {
  constructor(message: string) {
    super(message);
    this.name = 'EngineUnavailable';
  }
}

/** Nobody decided in the time given; the calls stay in the inbox: ask again later. */
export class StillPending extends AirlockError {
  readonly pending: string[];
  constructor(pending: string[]) {
    super(
      `${pending.length} call(s) still wait for a decision in Airlock (${pending.join(', ')}); ask again later with the same calls`,
    );
    this.name = 'StillPending';
    this.pending = pending;
  }
}

export interface AirlockOptions {
  /** The program's name: listed in Settings → Agents; its tools are CLIENT/TOOL in Airlock. */
  client: string;
  /** The program's own token (`airlock agents token CLIENT`); default: $AIRLOCK_TOKEN. */
  token?: string;
  /** `http://127.0.0.1:PORT`, with `token`; without it the data directory's engine is found. */
  baseUrl?: string;
  /** Airlock's data directory (default: $AIRLOCK_DATA_DIR, else the platform's data folder). */
  dataDir?: string;
  /** How long a request may take besides its long poll, in milliseconds (default 10 s). */
  timeoutMs?: number;
}

export interface CallRequest {
  /** One conversation or run: grants "for this chat" apply to it. */
  session: string;
  tool: string;
  args: Record<string, unknown>;
  /** The SDK's id of the call: the same call posted again finds the same item. */
  toolCallId: string;
  /** The tool's JSON schema for its arguments (the inbox checks an edit against it). */
  schema?: unknown;
  description?: string;
  /** Whether the program can run edited arguments. */
  editable?: boolean;
  /** Whether a denial's reason reaches the model. */
  takesReason?: boolean;
  cwd?: string;
  /** How long to wait for a person before answering, in milliseconds. */
  waitMs?: number;
}

/** Where the program's own token is read from when none is given. */
export const TOKEN_ENV = 'AIRLOCK_TOKEN';
/** How long the event stream may stay silent: the engine sends a keep-alive every 15 s. */
const STREAM_IDLE_MS = 60_000;

/** Where Airlock keeps its data, as the `airlock` command finds it. */
export function defaultDataDir(): string {
  if (process.env.AIRLOCK_DATA_DIR) return process.env.AIRLOCK_DATA_DIR;
  const home = homedir();
  if (process.platform === 'darwin') return join(home, 'Library', 'Application Support', 'airlock');
  if (process.platform === 'win32') return join(process.env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'airlock');
  return join(process.env.XDG_DATA_HOME ?? join(home, '.local', 'share'), 'airlock');
}

function pidAlive(pid: number): boolean {
  if (process.platform === 'win32') return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface Endpoint {
  socketPath?: string;
  host?: string;
  port?: number;
  token: string;
}

function decisionOf(body: Record<string, unknown>): Decision {
  const verdict = body.verdict;
  if (verdict !== 'allow' && verdict !== 'deny' && verdict !== 'undecided') {
    throw new AirlockError(`Airlock answered something that is not a decision: ${JSON.stringify(body)}`);
  }
  const text = (key: string) => (typeof body[key] === 'string' ? (body[key] as string) : undefined);
  const updated = body.updated_input;
  return {
    verdict,
    approvalId: text('approval_id'),
    status: text('status'),
    reason: text('reason'),
    updatedInput: updated && typeof updated === 'object' && !Array.isArray(updated) ? (updated as Record<string, unknown>) : undefined,
    decidedBy: text('decided_by'),
    claimedAt: text('claimed_at'),
  };
}

/** A call's event stream, read line by line: each `state` event is a decision; an `error`
 * event is a refusal. */
class EventStream {
  private event = '';
  private data: string[] = [];

  /** Takes one line; returns the decision an event ends with, if it is a state. */
  line(line: string): Decision | undefined {
    if (line === '') {
      const [event, data] = [this.event, this.data.join('\n')];
      this.event = '';
      this.data = [];
      if (event === 'error') {
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(data);
        } catch {
          body = { error: data };
        }
        throw new AirlockError(`Airlock refused: ${body.error ?? data}`, body.code as string | undefined);
      }
      return event === 'state' ? decisionOf(JSON.parse(data)) : undefined;
    }
    if (line.startsWith(':')) return undefined; // a keep-alive
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (name === 'event') this.event = value;
    else if (name === 'data') this.data.push(value);
    return undefined;
  }
}

/** What the model reads for an approved call that was claimed before (not run again). */
export function alreadyRan(decision: Decision): string {
  return `Airlock: this call was approved and already claimed to run at ${decision.claimedAt ?? 'an earlier time'} by an earlier run of this program; it is not run twice.`;
}

/** The denial's reason as the model reads it. */
export function denialMessage(decision: Decision): string {
  return decision.reason ?? 'Denied in Airlock.';
}

/** A program's connection to the Airlock engine's local API. */
export class Airlock {
  readonly client: string;
  private readonly options: AirlockOptions;

  constructor(options: AirlockOptions) {
    if (!options.client?.trim()) throw new Error('name the program: Airlock lists it by this name');
    this.client = options.client;
    this.options = options;
  }

  private endpoint(): Endpoint {
    const where = this.address();
    const token = this.options.token ?? process.env[TOKEN_ENV];
    if (!token) {
      throw new AirlockError(
        `no token of ${this.client}'s own: issue one with \`airlock agents token ${this.client}\` (Settings → Agents) and give it as \`token\` or $${TOKEN_ENV}; nothing was approved`,
      );
    }
    return { ...where, token };
  }

  /** Where the engine listens: `baseUrl`, or the data directory's engine (its socket on Unix). */
  private address(): Omit<Endpoint, 'token'> {
    const { baseUrl } = this.options;
    if (baseUrl) {
      const url = new URL(baseUrl);
      return { host: url.hostname, port: Number(url.port || 80) };
    }
    const dataDir = this.options.dataDir ?? defaultDataDir();
    const notRunning = new EngineUnavailable(
      `Airlock is not running for ${dataDir} (start the app, or \`airlock serve\`); nothing was approved`,
    );
    let api: { addr?: string; pid?: number; socket?: string };
    try {
      api = JSON.parse(readFileSync(join(dataDir, 'api.json'), 'utf8'));
    } catch {
      throw notRunning;
    }
    if (typeof api.pid === 'number' && !pidAlive(api.pid)) throw notRunning;
    const socketPath = join(dataDir, 'api.sock');
    if (api.socket && process.platform !== 'win32' && existsSync(socketPath)) return { socketPath };
    const [host, port] = (api.addr ?? '').split(/:(?=\d+$)/);
    return { host, port: Number(port) };
  }

  /** A refusal's error from its status and body. */
  private static refusal(status: number | undefined, text: string): AirlockError {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { error: text };
    }
    const message = (parsed.error as string) ?? text;
    return new AirlockError(`Airlock refused: ${message} (HTTP ${status})`, parsed.code as string | undefined);
  }

  private static unreachable(error: Error): EngineUnavailable {
    return new EngineUnavailable(`Airlock is not running or cannot be reached (${error.message}); nothing was approved`);
  }

  private send(method: string, path: string, body?: unknown, waitMs = 0): Promise<Record<string, unknown>> {
    const endpoint = this.endpoint();
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const timeout = (this.options.timeoutMs ?? 10_000) + waitMs;
    return new Promise((resolve, reject) => {
      const request = httpRequest(
        {
          socketPath: endpoint.socketPath,
          host: endpoint.host,
          port: endpoint.port,
          method,
          path,
          headers: {
            authorization: `Bearer ${endpoint.token}`,
            ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          },
          timeout,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: Record<string, unknown>;
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = { error: text };
            }
            if ((response.statusCode ?? 500) >= 400) {
              reject(Airlock.refusal(response.statusCode, text));
            } else {
              resolve(parsed);
            }
          });
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error('timed out')));
      request.on('error', (error) => reject(Airlock.unreachable(error)));
      if (payload) request.write(payload);
      request.end();
    });
  }

  /** Reads the call's event stream until it ends: the last state it gave (`last` when none). An
   * `error` event is a refusal. */
  private events(approvalId: string, waitMs: number | undefined, last: Decision): Promise<Decision> {
    const endpoint = this.endpoint();
    const query = waitMs === undefined ? '' : `?wait_ms=${waitMs}`;
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: AirlockError) => {
        if (!settled) {
          settled = true;
          request.destroy();
          reject(error);
        }
      };
      const request = httpRequest(
        {
          socketPath: endpoint.socketPath,
          host: endpoint.host,
          port: endpoint.port,
          method: 'GET',
          path: `/v1/agent-calls/${encodeURIComponent(approvalId)}/events${query}`,
          headers: { authorization: `Bearer ${endpoint.token}`, accept: 'text/event-stream' },
          timeout: STREAM_IDLE_MS,
        },
        (response) => {
          response.setEncoding('utf8');
          let buffered = '';
          if ((response.statusCode ?? 500) >= 400) {
            response.on('data', (chunk: string) => (buffered += chunk));
            response.on('end', () => fail(Airlock.refusal(response.statusCode, buffered)));
            return;
          }
          const events = new EventStream();
          response.on('data', (chunk: string) => {
            buffered += chunk;
            let newline: number;
            while ((newline = buffered.indexOf('\n')) >= 0) {
              const line = buffered.slice(0, newline).replace(/\r$/, '');
              buffered = buffered.slice(newline + 1);
              try {
                last = events.line(line) ?? last;
              } catch (error) {
                fail(error instanceof AirlockError ? error : new AirlockError(`Airlock answered something that is not a state: ${error}`));
                return;
              }
            }
          });
          response.on('end', () => {
            if (!settled) {
              settled = true;
              resolve(last);
            }
          });
          response.on('error', (error) => fail(Airlock.unreachable(error)));
        },
      );
      request.on('timeout', () => request.destroy(new Error('the event stream went silent')));
      request.on('error', (error) => fail(Airlock.unreachable(error)));
      request.end();
    });
  }

  /** Posts a call in the deferred style: the policy's answer, or its item, pending. */
  async request(call: CallRequest): Promise<Decision> {
    const definition =
      call.schema !== undefined || call.description !== undefined
        ? { description: call.description ?? null, input_schema: call.schema ?? null }
        : null;
    const body = {
      agent: 'app',
      client: this.client,
      agent_session: call.session,
      cwd: call.cwd ?? null,
      tool: call.tool,
      input: call.args,
      tool_use_id: call.toolCallId,
      editable: call.editable ?? true,
      takes_reason: call.takesReason ?? true,
      defer: true,
      wait_ms: call.waitMs ?? 0,
      definition,
    };
    return decisionOf(await this.send('POST', '/v1/agent-calls', body, call.waitMs ?? 0));
  }

  /** The call's decision, waiting up to `waitMs` while nobody decided (pending after that). */
  async decision(approvalId: string, waitMs = 0): Promise<Decision> {
    const path = `/v1/agent-calls/${encodeURIComponent(approvalId)}?wait_ms=${waitMs}`;
    return decisionOf(await this.send('GET', path, undefined, waitMs));
  }

  /** Waits on the call's event stream for a pending decision (`timeoutMs` at most; none: as
   * long as it takes); still pending at the deadline, it comes back pending. */
  async wait(decision: Decision, timeoutMs?: number): Promise<Decision> {
    if (decision.status !== 'pending' || !decision.approvalId) return decision;
    const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    for (;;) {
      const left = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
      decision = await this.events(decision.approvalId!, left, decision);
      if (decision.status !== 'pending') return decision;
      if (deadline !== undefined && Date.now() >= deadline) return decision;
    }
  }

  /** Claims an approved call just before running it: true the first time, false when it was
   * claimed before (do not run it again). */
  async claim(decision: Decision): Promise<boolean> {
    if (!decision.approvalId) return decision.verdict === 'allow';
    try {
      await this.send('POST', `/v1/agent-calls/${encodeURIComponent(decision.approvalId)}/claim`);
      return true;
    } catch (error) {
      if (error instanceof AirlockError && error.code === 'already_decided') return false;
      throw error;
    }
  }
}
