// Request shapes shared by the desktop (Tauri commands, lib/api.ts) and the phone page (HTTPS,
// phone/remote.ts): nothing here may import Tauri.
import type { CommandError } from './bindings/CommandError';
import type { DecisionRequest } from './bindings/DecisionRequest';

/** A command's refusal: `code` for programs, `message` for people. */
export function errorMessage(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error) return String((error as CommandError).message);
  return String(error);
}

/** A decision with only the fields a channel usually sets. */
export function decision(d: Partial<DecisionRequest> & { approval_id: string; approve: boolean }): DecisionRequest {
  return {
    reason: null,
    args: null,
    for_chat: false,
    remember: null,
    exact_args: false,
    session: null,
    args_hash: null,
    ...d,
  };
}
