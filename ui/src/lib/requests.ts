// Request shapes shared by the desktop (Tauri commands, lib/api.ts) and the phone page (HTTPS,
// phone/remote.ts): nothing here may import Tauri.
import type { Approval } from './bindings/Approval';
import type { CommandError } from './bindings/CommandError';
import type { DecisionKind } from './bindings/DecisionKind';
import type { DecisionRequest } from './bindings/DecisionRequest';
import type { InboxItem } from './bindings/InboxItem';

/** A command's refusal: `code` for programs, `message` for people. */
export function errorMessage(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error) return String((error as CommandError).message);
  return String(error);
}

/** Whether the item takes this kind of decision: a channel shows only what the item offers
 *  (the engine refuses anything else). */
export function offers(item: Pick<InboxItem, 'available_decisions'>, kind: DecisionKind): boolean {
  return item.available_decisions.includes(kind);
}

/** The item a decision is about, bound to the arguments the person was shown. */
type Shown = Pick<InboxItem, 'approval_id' | 'args_hash'>;

/** Approve what was shown — with an edit (`args`), "allow for this chat" or a grant when given.
 *  `session`: the chat the channel acts in, when it acts in one. */
export function approval(item: Shown, options: Partial<Approval> = {}, session: string | null = null): DecisionRequest {
  return {
    approval_id: item.approval_id,
    args_hash: item.args_hash,
    session,
    decision: { kind: 'approve', for_chat: false, exact_args: false, ...options },
  };
}

/** Deny what was shown, with the reason the model reads. */
export function denial(item: Shown, reason: string | null, session: string | null = null): DecisionRequest {
  return {
    approval_id: item.approval_id,
    args_hash: item.args_hash,
    session,
    decision: { kind: 'deny', reason, remember: null, exact_args: false },
  };
}
