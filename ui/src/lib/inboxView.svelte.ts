// What the Inbox screen shows besides the items — the selection, the item in the detail pane,
// the grouping — kept here rather than in the screen, so that leaving the screen and coming
// back (or deciding one item) does not lose it.
import { SvelteSet } from 'svelte/reactivity';
import type { GroupBy } from './inbox';
import { Selection } from './selection';

export class InboxView {
  readonly selection = new Selection();
  /** Bumped when the selection changes (it is a plain class, not reactive by itself). */
  selectionVersion = $state(0);
  focusedId = $state<string | null>(null);
  groupBy = $state<GroupBy>('session');
  /** Tool groups folded to their header ("write_file × 12"). */
  readonly collapsed = new SvelteSet<string>();

  /** Back to a fresh screen (tests). */
  reset(): void {
    this.selection.setAll([], false);
    this.selectionVersion++;
    this.focusedId = null;
    this.groupBy = 'session';
    this.collapsed.clear();
  }
}

export const inboxView = new InboxView();
