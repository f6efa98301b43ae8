// Which key presses are the Inbox's shortcuts and which belong to what has the focus.

const NOT_TEXT = new Set(['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color']);

/** Whether a key press on `target` is the person typing or filling in a form (then it is not a
 * shortcut): text fields, selects, editable content, and any control of a form (a deny reason,
 * an elicitation's answer). A checkbox in a list — Select all, a row's — is not: shortcuts go
 * on working after one clicks it. */
export function typesInto(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT') return true;
  if (target.tagName === 'INPUT' && !NOT_TEXT.has((target as HTMLInputElement).type)) return true;
  return target.closest('form') !== null;
}
