/**
 * A binary min-heap by (`at`, insertion order): the local queue's messages by the time they become visible, so a
 * poll takes the ready ones in O(log n) each and never walks the messages still delayed or in flight.
 */
export class ReadyHeap<T> {
  private items: Array<{ at: number; order: number; value: T }> = [];
  private inserted = 0;

  get size(): number {
    return this.items.length;
  }

  push(at: number, value: T): void {
    const items = this.items;
    items.push({ at, order: this.inserted++, value });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  /** The earliest entry's time, or undefined when empty. */
  peekAt(): number | undefined {
    return this.items[0]?.at;
  }

  /** Removes and returns the earliest entry. */
  pop(): { at: number; value: T } | undefined {
    const items = this.items;
    const top = items[0];
    if (!top) return undefined;
    const last = items.pop()!;
    if (items.length) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let least = i;
        if (l < items.length && this.less(l, least)) least = l;
        if (r < items.length && this.less(r, least)) least = r;
        if (least === i) break;
        [items[i], items[least]] = [items[least]!, items[i]!];
        i = least;
      }
    }
    return { at: top.at, value: top.value };
  }

  private less(a: number, b: number): boolean {
    const x = this.items[a]!;
    const y = this.items[b]!;
    return x.at < y.at || (x.at === y.at && x.order < y.order);
  }
}
