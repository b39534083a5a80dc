import { describe, expect, it } from 'vitest';
import { ReadyHeap } from '#shared/queue/ready-heap.ts';

describe('ReadyHeap (the local queue by visible time)', () => {
  it('pops by time, then in the order pushed', () => {
    const h = new ReadyHeap<string>();
    const times = [5, 1, 9, 1, 3, 7, 1, 0, 9, 4];
    times.forEach((at, i) => h.push(at, `${at}:${i}`));
    expect(h.size).toBe(10);
    expect(h.peekAt()).toBe(0);
    const out: string[] = [];
    for (let e = h.pop(); e; e = h.pop()) out.push(e.value);
    expect(out).toEqual(['0:7', '1:1', '1:3', '1:6', '3:4', '4:9', '5:0', '7:5', '9:2', '9:8']);
    expect(h.peekAt()).toBeUndefined();
  });
});
