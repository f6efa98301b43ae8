import { describe, expect, it } from 'vitest';
import { Selection } from './selection';

const order = ['a', 'b', 'c', 'd', 'e'];

describe('Selection', () => {
  it('toggles one item at a time', () => {
    const s = new Selection();
    s.toggle('b');
    s.toggle('d');
    expect([...s.ids].sort()).toEqual(['b', 'd']);
    s.toggle('b');
    expect([...s.ids]).toEqual(['d']);
  });

  it('shift-click selects the range from the anchor, in either direction', () => {
    const s = new Selection();
    s.toggle('b');
    s.extend('d', order);
    expect([...s.ids].sort()).toEqual(['b', 'c', 'd']);
    s.toggle('e');
    s.extend('a', order);
    expect([...s.ids].sort()).toEqual(order);
  });

  it('shift-click from an unselected anchor clears the range', () => {
    const s = new Selection();
    s.setAll(order, true);
    s.toggle('b');
    s.extend('d', order);
    expect([...s.ids].sort()).toEqual(['a', 'e']);
  });

  it('forgets items that are no longer pending', () => {
    const s = new Selection();
    s.setAll(order, true);
    s.retain(new Set(['a', 'c']));
    expect([...s.ids].sort()).toEqual(['a', 'c']);
  });
});
