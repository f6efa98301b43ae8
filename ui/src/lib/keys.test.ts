import { describe, expect, it } from 'vitest';
import { typesInto } from './keys';

function el(html: string, pick: string): HTMLElement {
  document.body.innerHTML = html;
  return document.querySelector(pick) as HTMLElement;
}

describe('typesInto', () => {
  it('leaves shortcuts to list checkboxes and takes them from text fields and forms', () => {
    expect(typesInto(el('<input type="checkbox" aria-label="Select all">', 'input'))).toBe(false);
    expect(typesInto(el('<div><input type="checkbox"></div>', 'input'))).toBe(false);
    expect(typesInto(el('<input>', 'input'))).toBe(true);
    expect(typesInto(el('<input type="number">', 'input'))).toBe(true);
    expect(typesInto(el('<textarea></textarea>', 'textarea'))).toBe(true);
    expect(typesInto(el('<select></select>', 'select'))).toBe(true);
    // An elicitation's checkbox: answering the form, not approving the selection.
    expect(typesInto(el('<form><label><input type="checkbox"> Tuna</label></form>', 'input'))).toBe(true);
    expect(typesInto(el('<button>Approve</button>', 'button'))).toBe(false);
    expect(typesInto(null)).toBe(false);
  });
});
