// The local API's agents' path as a program of one's own uses it (see clients/python's
// _client.py for the same in Python, and README.md's "Use it from your own agent").
//
// A call is posted in the deferred style (`POST /v1/agent-calls` with `defer`): the policy may
// answer at once, else the call waits in Airlock's inbox and its id comes back at once. Its
// decision is read by id (`GET /v1/agent-calls/{id}?wait_ms=N`, a long poll) or by posting the
// same call again (same session and tool-call id). Reading a decision twice gives the same
// decision. Running an approved call happens at most once: `claim` claims it just before it
// runs, and a second claim (the program resumed from state saved before it ran) is refused.

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
  /** The token to send; read from the data directory when not given. */
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

/** One long poll's length: the wait is a series of them. */
const POLL_MS = 25_000;

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
    const { baseUrl, token } = this.options;
    if (baseUrl) {
      if (!token) throw new AirlockError('a baseUrl needs its token');
      const url = new URL(baseUrl);
      return { host: url.hostname, port: Number(url.port || 80), token };
    }
    const dataDir = this.options.dataDir ?? defaultDataDir();
    const notRunning = new EngineUnavailable(
      `Airlock is not running for ${dataDir} (start the app, or \`airlock serve\`); nothing was approved`,
    );
    let api: { addr?: string; pid?: number; socket?: string };
    let found: string;
    try {
      api = JSON.parse(readFileSync(join(dataDir, 'api.json'), 'utf8'));
      found = token ?? readFileSync(join(dataDir, 'token'), 'utf8').trim();
    } catch {
      throw notRunning;
    }
    if (typeof api.pid === 'number' && !pidAlive(api.pid)) throw notRunning;
    const socketPath = join(dataDir, 'api.sock');
    if (api.socket && process.platform !== 'win32' && existsSync(socketPath)) return { socketPath, token: found };
    const [host, port] = (api.addr ?? '').split(/:(?=\d+$)/);
    return { host, port: Number(port), token: found };
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
              const message = (parsed.error as string) ?? text;
              reject(new AirlockError(`Airlock refused: ${message} (HTTP ${response.statusCode})`, parsed.code as string | undefined));
            } else {
              resolve(parsed);
            }
          });
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error('timed out')));
      request.on('error', (error) =>
        reject(new EngineUnavailable(`Airlock is not running or cannot be reached (${error.message}); nothing was approved`)),
      );
      if (payload) request.write(payload);
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

  /** Waits for a pending decision (`timeoutMs` at most; none: as long as it takes). */
  async wait(decision: Decision, timeoutMs?: number): Promise<Decision> {
    if (decision.status !== 'pending' || !decision.approvalId) return decision;
    const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    for (;;) {
      const left = deadline === undefined ? POLL_MS : Math.min(POLL_MS, Math.max(0, deadline - Date.now()));
      decision = await this.decision(decision.approvalId!, left);
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
