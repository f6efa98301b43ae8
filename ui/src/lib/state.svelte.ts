// The window's live state: sessions, the inbox and streamed text, kept current from engine
// events. Big lists are `$state.raw` and replaced whole, so 10,000 items stay cheap.
import { api, approval, errorMessage, onEngineEvent, onNavigate, onResync } from './api';
import type { DecisionOutcome } from './bindings/DecisionOutcome';
import type { EngineEvent } from './bindings/EngineEvent';
import type { InboxItem } from './bindings/InboxItem';
import type { Navigate } from './bindings/Navigate';
import type { SessionRow } from './bindings/SessionRow';
import type { SessionStatus } from './bindings/SessionStatus';

export type Screen = 'chat' | 'inbox' | 'settings' | 'history' | 'insights';
const SCREENS: readonly string[] = ['chat', 'inbox', 'settings', 'history', 'insights'];

export class AppState {
  screen = $state<Screen>('chat');
  sessions = $state.raw<SessionRow[]>([]);
  inbox = $state.raw<InboxItem[]>([]);
  /** Text streamed for each session's current model step, until the step is saved. */
  live = $state<Record<string, string>>({});
  /** A hosted agent's thinking streamed for each session, apart from `live`, until saved. */
  liveThought = $state<Record<string, string>>({});
  /** Bumped when a session's transcript changed; the chat reloads it. */
  revision = $state<Record<string, number>>({});
  /** Status from events: the engine announces steps as events and stores only turn ends. */
  status = $state<Record<string, SessionStatus>>({});
  currentSession = $state<string | null>(null);
  /** A half-typed message of each chat: kept here, not in the Chat screen, so it survives a
   *  trip to Settings (the screen is rebuilt when it comes back). */
  drafts = $state<Record<string, string>>({});
  /** The first-run setup is open (an app with no provider opens on it until saved or skipped). */
  setupOpen = $state(false);
  focusApproval = $state<string | null>(null);
  error = $state<string | null>(null);
  /** "Pause all agents": nothing runs until resumed (switched here, in the tray or the CLI). */
  paused = $state(false);
  /** Set when the disk refused to record a decision: nothing more is decided until a restart. */
  storageError = $state<string | null>(null);
  /** Bumped when a server was added, changed or removed, or its state changed; Settings reads
   * the servers again. */
  serversRevision = $state(0);

  /** Counts inbox events, so a fetch that raced with one is not applied over it. */
  private inboxEpoch = 0;
  private added: InboxItem[] = [];
  private removed = new Set<string>();
  /** Ids decided while this window was open: a request event delivered after its decision
   * (events queue behind a reload under load) must not bring the item back. */
  private decided = new Set<string>();
  private flushTimer: ReturnType<typeof setTimeout> | null = null;

  async start(): Promise<void> {
    // Listening first: an event that arrives while the first reload is on its way is applied
    // (the reload reads the inbox again when one did), never missed.
    await onEngineEvent((event) => this.apply(event));
    await onResync(() => void this.reload());
    await onNavigate((n) => this.navigate(n));
    await this.reload();
    // A window created to open an item (tray, notification, `airlock open`) missed the event
    // that named it: the shell kept it until now.
    try {
      const pending = await api.takeNavigation();
      if (pending) this.navigate(pending);
    } catch {
      // An older shell without the command: the window opens as it is.
    }
  }

  navigate(n: Navigate): void {
    if (SCREENS.includes(n.screen)) this.screen = n.screen as Screen;
    this.focusApproval = n.approval_id;
  }

  async reload(): Promise<void> {
    try {
      const [sessions, inbox, paused] = await Promise.all([api.sessions(), this.refreshInbox(), api.paused()]);
      this.paused = paused === true;
      // Asked on its own: an older shell without the command must not block the rest.
      void api
        .storageFailure()
        .then((why) => (this.storageError = typeof why === 'string' ? why : null))
        .catch(() => {});
      this.sessions = sessions;
      if (this.currentSession === null && sessions.length > 0) this.currentSession = sessions[sessions.length - 1].name;
      else if (this.currentSession === null && inbox.length > 0) this.currentSession = inbox[0].session;
    } catch (e) {
      this.error = errorMessage(e);
    }
  }

  /** Shows the inbox as the engine has it, fetched again when events arrived meanwhile. It is
   * shown as soon as it is fetched: events applied while the rest of a reload is still on its
   * way (the window's commands go over the local API) would otherwise be overwritten by it. */
  private async refreshInbox(): Promise<InboxItem[]> {
    for (;;) {
      const epoch = this.inboxEpoch;
      const items = await api.inbox();
      if (epoch === this.inboxEpoch && this.added.length === 0 && this.removed.size === 0) {
        this.inbox = items;
        return items;
      }
      await new Promise((done) => setTimeout(done, 40));
    }
  }

  /** What a person reads for a session: its title (an agent's session: folder and first
   *  prompt), else its name. */
  sessionTitle(name: string): string {
    return this.sessions.find((s) => s.name === name)?.title ?? name;
  }

  apply(event: EngineEvent): void {
    if (event.type === 'approval_requested' || event.type === 'approvals_decided') this.inboxEpoch++;
    switch (event.type) {
      case 'approval_requested':
        this.added.push(event.item);
        this.schedule();
        this.bump(event.item.session);
        // An agent's session appears with its first call, and is titled by it.
        if (event.item.agent && !this.sessions.find((s) => s.name === event.item.session)?.title)
          void api.sessions().then((s) => (this.sessions = s));
        break;
      case 'approvals_decided': {
        // One event for a whole batch (Approve all): one inbox update, one bump per session.
        const sessions = new Set<string>();
        if (this.decided.size > 100_000) this.decided.clear();
        for (const decided of event.decisions) {
          this.removed.add(decided.approval_id);
          this.decided.add(decided.approval_id);
          sessions.add(decided.session);
        }
        this.schedule();
        sessions.forEach((session) => this.bump(session));
        break;
      }
      case 'text_delta':
        this.live[event.session] = (this.live[event.session] ?? '') + event.text;
        break;
      case 'thought_delta':
        this.liveThought[event.session] = (this.liveThought[event.session] ?? '') + event.text;
        break;
      case 'session_status': {
        this.status[event.session] = event.status;
        if (!this.sessions.some((s) => s.name === event.session)) void api.sessions().then((s) => (this.sessions = s));
        // A new step begins or the step was saved: the streamed text is in the transcript now.
        this.live[event.session] = '';
        this.liveThought[event.session] = '';
        this.bump(event.session);
        break;
      }
      case 'tool_finished':
        this.bump(event.session);
        break;
      case 'storage_failed':
        this.storageError = event.reason;
        break;
      case 'paused':
        this.paused = event.paused;
        break;
      case 'servers_changed':
        this.serversRevision++;
        break;
      case 'turn_ended':
        // Its cancelled requests arrived as approvals_decided: no inbox re-read.
        this.live[event.outcome.session] = '';
        this.liveThought[event.outcome.session] = '';
        this.bump(event.outcome.session);
        break;
    }
  }

  async setPaused(paused: boolean): Promise<void> {
    try {
      await api.setPaused(paused);
      this.paused = paused;
    } catch (e) {
      this.error = errorMessage(e);
    }
  }

  /** What a session is doing now; pending items mean it waits for a person. */
  statusOf(session: SessionRow): SessionStatus {
    const live = this.status[session.name];
    if (live) return live;
    if (session.status !== 'idle' && this.inbox.some((i) => i.session === session.name)) return 'awaiting_approval';
    return session.status;
  }

  private bump(session: string): void {
    this.revision[session] = (this.revision[session] ?? 0) + 1;
  }

  /** Applies inbox changes at most every 30 ms, so a burst of events is one update. An item
   * already shown is not added twice: a reload's fetch may include items whose events were
   * still on their way to the window. */
  private schedule(): void {
    if (this.flushTimer !== null) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      const removed = this.removed;
      const kept = removed.size ? this.inbox.filter((i) => !removed.has(i.approval_id)) : this.inbox;
      const shown = new Set(kept.map((i) => i.approval_id));
      const added = this.added.filter((i) => {
        // Every removed id is also in `decided`.
        if (this.decided.has(i.approval_id) || shown.has(i.approval_id)) return false;
        shown.add(i.approval_id);
        return true;
      });
      this.removed = new Set();
      this.added = [];
      this.inbox = added.length ? [...kept, ...added] : kept;
    }, 30);
  }

  /** Removes decided items at once (the events confirm it later). */
  forget(ids: Iterable<string>): void {
    const gone = new Set(ids);
    this.inbox = this.inbox.filter((i) => !gone.has(i.approval_id));
  }

  /** Approves `items` as shown (each bound to the hash of the arguments the person saw) and
   * forgets those approved; the outcomes, in order (a refused one carries its error). */
  async approveAsShown(items: InboxItem[]): Promise<DecisionOutcome[]> {
    const outcomes = await api.decide(
      items.map((item) => approval(item)),
      'inbox',
    );
    this.forget(outcomes.filter((o) => !o.error).map((o) => o.approval_id));
    return outcomes;
  }
}

export const app = new AppState();
