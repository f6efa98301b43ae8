// Inbox selection: checkboxes, shift-click ranges, select all. Pure, so it is tested on its own.

export class Selection {
  readonly ids = new Set<string>();
  private anchor: string | null = null;

  has(id: string): boolean {
    return this.ids.has(id);
  }

  get size(): number {
    return this.ids.size;
  }

  /** A plain click on a checkbox (or `x`): flips one item and makes it the anchor. */
  toggle(id: string): void {
    if (this.ids.has(id)) this.ids.delete(id);
    else this.ids.add(id);
    this.anchor = id;
  }

  /** Shift-click: every item from the anchor to `id` (in `order`) takes the anchor's state. */
  extend(id: string, order: readonly string[]): void {
    if (this.anchor === null) return this.toggle(id);
    const from = order.indexOf(this.anchor);
    const to = order.indexOf(id);
    if (from < 0 || to < 0) return this.toggle(id);
    const select = this.ids.has(this.anchor);
    const [lo, hi] = from < to ? [from, to] : [to, from];
    for (const each of order.slice(lo, hi + 1)) {
      if (select) this.ids.add(each);
      else this.ids.delete(each);
    }
    this.anchor = id;
  }

  /** Adds or removes these ids, leaving the rest of the selection as it is (a group's checkbox). */
  setSome(ids: readonly string[], on: boolean): void {
    for (const id of ids) {
      if (on) this.ids.add(id);
      else this.ids.delete(id);
    }
  }

  setAll(ids: readonly string[], on: boolean): void {
    this.ids.clear();
    if (on) for (const id of ids) this.ids.add(id);
  }

  /** Drops ids that are no longer pending. */
  retain(present: ReadonlySet<string>): void {
    for (const id of [...this.ids]) if (!present.has(id)) this.ids.delete(id);
    if (this.anchor !== null && !present.has(this.anchor)) this.anchor = null;
  }
}
