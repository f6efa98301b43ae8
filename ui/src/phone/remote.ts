// The phone page's calls to Airlock's phone inbox (crates/remote) over HTTPS, with this device's
// token: the command table's phone subset (crates/protocol/src/commands.rs) through its
// generated client, posted to /v1/commands/{name}. The page is served by that same server, so
// every path is relative to it. Events come over fetch (EventSource cannot send a token) and are
// parsed with eventsource-parser.
import { createParser } from 'eventsource-parser';
import { commandClient, type PhoneCommand } from '../lib/bindings/commands';
import type { DecisionOutcome } from '../lib/bindings/DecisionOutcome';
import type { DecisionRequest } from '../lib/bindings/DecisionRequest';
import type { ElicitationAnswer } from '../lib/bindings/ElicitationAnswer';

const TOKEN_KEY = 'airlock.phone.token';

/** This device has no token, or Airlock no longer accepts it (revoked): pair again. */
export class NotPaired extends Error {}

export const deviceToken = {
  get: (): string | null => localStorage.getItem(TOKEN_KEY),
  set: (token: string) => localStorage.setItem(TOKEN_KEY, token),
  clear: () => localStorage.removeItem(TOKEN_KEY),
};

async function request<T>(path: string, init: RequestInit = {}, authorized = true): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorized) {
    const token = deviceToken.get();
    if (!token) throw new NotPaired('pair this phone first');
    headers.authorization = `Bearer ${token}`;
  }
  const response = await fetch(path, { ...init, headers });
  const body = await response.json().catch(() => null);
  if (response.status === 401) {
    deviceToken.clear();
    throw new NotPaired(body?.error ?? 'this phone is not paired');
  }
  if (!response.ok) throw new Error(body?.error ?? `HTTP ${response.status}`);
  return body as T;
}

const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });

/** The phone's commands of the table, typed by it. */
const call = commandClient<PhoneCommand>((name, args) => request(`/v1/commands/${name}`, post(args)));

/** The decision's outcome; a refused one is an error (its message). */
function decided(outcome: DecisionOutcome | undefined): DecisionOutcome {
  if (!outcome) throw new Error('no outcome for the decision');
  if (outcome.error) throw new Error(outcome.error.message);
  return outcome;
}

export const remote = {
  /** Pairs with a one-time code; keeps the token this device gets. */
  pair: async (code: string, deviceName: string): Promise<void> => {
    const answer = await request<{ token: string }>('/v1/pair', post({ code, device_name: deviceName }), false);
    deviceToken.set(answer.token);
  },
  inbox: () => call('inbox', {}),
  decide: async (decision: DecisionRequest) => decided((await call('decide', { decisions: [decision] }))[0]),
  /** Several decisions in one request (one transaction); an outcome per decision. */
  decideAll: (decisions: DecisionRequest[]) => call('decide', { decisions }),
  answer: (approvalId: string, answer: ElicitationAnswer) => call('answer_elicitation', { approvalId, answer }),
  /**
   * Streams the inbox's events (`approval_requested`, `approvals_decided`) to `onEvent` until
   * the stream ends or `signal` aborts; `onOpen` when connected.
   */
  events: async (onOpen: () => void, onEvent: (type: string) => void, signal: AbortSignal): Promise<void> => {
    const token = deviceToken.get();
    if (!token) throw new NotPaired('pair this phone first');
    const response = await fetch('/v1/events', { headers: { authorization: `Bearer ${token}` }, signal });
    if (response.status === 401) {
      deviceToken.clear();
      const body = await response.json().catch(() => null);
      throw new NotPaired(body?.error ?? 'this phone is not paired');
    }
    if (!response.ok || !response.body) throw new Error(`events: HTTP ${response.status}`);
    onOpen();
    const parser = createParser({ onEvent: (event) => onEvent(event.event ?? 'message') });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      parser.feed(value);
    }
  },
};

/** A name for this device from its browser's user agent ("Pixel 7", "iPhone"), to edit. */
export function guessDeviceName(userAgent: string): string {
  const android = /Android [^;)]*;\s*([^;)]+?)(?:\s+Build\/[^;)]*)?\)/.exec(userAgent);
  // Chrome's reduced user agent says "K" instead of the model.
  if (android && android[1].trim() !== 'K') return android[1].trim();
  for (const name of ['iPhone', 'iPad']) if (userAgent.includes(name)) return name;
  return userAgent.includes('Android') ? 'Android phone' : 'Phone';
}

/** The pairing code (`#pair=CODE`, from the QR code) or the item to open (`#item=ID`, from a push). */
export function fromHash(hash: string): { pair: string | null; item: string | null } {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  return { pair: params.get('pair'), item: params.get('item') };
}
