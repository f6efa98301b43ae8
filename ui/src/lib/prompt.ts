import type { GrantRequest } from './bindings/GrantRequest';

/** A timed or counted grant made with an approval: later calls of the tool run without asking
 *  for `for_secs` seconds, or `times - 1` more calls (this one counts), whichever ends first —
 *  in the chats of `scope`, with the arguments of `args` (by default this chat and arguments
 *  like these). */
export type Grant = GrantRequest;

/** What the person chose in the permission prompt. */
export type PromptChoice = { approve: boolean; forChat: boolean; reason: string | null; grant?: Grant };

/** The grants offered next to Approve. */
export const GRANT_DURATIONS: { label: string; secs: number }[] = [
  { label: '15 min', secs: 15 * 60 },
  { label: '1 hour', secs: 3600 },
];

/** What is left of a grant, as a person reads it: "12 min left · 3 calls left". */
export function grantLeft(expiresAt: string | null, usesLeft: number | null, now: number = Date.now()): string {
  const parts: string[] = [];
  if (expiresAt) {
    const secs = Math.max(0, Math.round((Date.parse(expiresAt) - now) / 1000));
    parts.push(
      secs < 60 ? `${secs} s left` : secs < 3600 ? `${Math.ceil(secs / 60)} min left` : `${Math.floor(secs / 3600)} h ${Math.floor((secs % 3600) / 60)} min left`,
    );
  }
  if (usesLeft !== null) parts.push(`${usesLeft} call${usesLeft === 1 ? '' : 's'} left`);
  return parts.join(' · ') || 'until revoked';
}
