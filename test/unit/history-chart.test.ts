import { writeFileSync } from 'node:fs';
import { Resvg } from '@resvg/resvg-js';
import { describe, expect, it } from 'vitest';
import type { HistoryRecord } from '#shared/domain/history/entity.ts';
import { progressChartSvg } from '#shared/domain/history/chart.ts';

const goal = { title: 'Grow weekly active teams to 400', start_date: '2026-01-01', end_date: '2026-03-31' };
const at = (date: string, progress: number | null, cause: HistoryRecord['cause'] = 'checkin'): HistoryRecord => ({
  at: `${date}T10:00:00.000Z`,
  value: progress,
  progress,
  status: 'on_track',
  cause,
});
const history = [
  at('2026-01-05', 5),
  at('2026-01-19', 12),
  at('2026-02-02', 20, 'checkin_updated'),
  at('2026-02-10', 35, 'rollup'),
  at('2026-02-24', 41),
];
const now = new Date('2026-03-01T12:00:00Z');

/** Renders the SVG as resvg would in any viewer, at `width` pixels wide. */
function render(svg: string, width = 600) {
  const png = new Resvg(svg, { fitTo: { mode: 'width', value: width }, font: { loadSystemFonts: true } }).render();
  return { png: png.asPng(), pixels: png.pixels, width: png.width, height: png.height };
}

/** Pixels of roughly this colour (RGBA buffer). */
function count(pixels: Buffer, match: (r: number, g: number, b: number) => boolean): number {
  let n = 0;
  for (let i = 0; i < pixels.length; i += 4) if (match(pixels[i]!, pixels[i + 1]!, pixels[i + 2]!)) n++;
  return n;
}
const blue = (r: number, g: number, b: number) => b > 180 && r < 90 && g < 150; // progress line #2563eb
const red = (r: number, g: number, b: number) => r > 180 && g < 80 && b < 80; // today #dc2626
const nonWhite = (r: number, g: number, b: number) => r < 240 || g < 240 || b < 240;

describe('progress chart', () => {
  it('renders a non-blank 600x300 chart with the progress line, the dashed pace line, today and labelled axes', () => {
    const svg = progressChartSvg(goal, history, now);
    expect(svg).toContain('viewBox="0 0 600 300"');
    expect(svg).toMatch(/stroke-dasharray="6 4"/); // expected pace, dashed
    expect(svg).toContain('>today<');
    expect(svg).toContain('>100%<');
    expect(svg).toContain('Date (UTC)');
    expect(progressChartSvg({ ...goal, title: 'Keep churn < 2% & "grow"' }, history, now)).toContain(
      'Keep churn &lt; 2% &amp; &quot;grow&quot;',
    ); // escaped
    const { png, pixels, width, height } = render(svg);
    expect([width, height]).toEqual([600, 300]);
    expect(count(pixels, nonWhite)).toBeGreaterThan(6000);
    expect(count(pixels, blue)).toBeGreaterThan(500);
    expect(count(pixels, red)).toBeGreaterThan(30);
    if (process.env.WRITE_CHART_IMAGE) writeFileSync('docs/images/progress.png', png);
  });

  it('scales: the same SVG renders sharp at twice the size', () => {
    const { width, height, pixels } = render(progressChartSvg(goal, history, now), 1200);
    expect([width, height]).toEqual([1200, 600]);
    expect(count(pixels, blue)).toBeGreaterThan(2000);
  });

  it('progress holds as a step until the next change and is drawn up to today', () => {
    const svg = progressChartSvg(goal, [at('2026-01-10', 10), at('2026-01-20', 30)], now);
    const line = svg
      .match(/<polyline points="([^"]+)" fill="none" stroke="#2563eb"/)![1]!
      .split(' ')
      .map((p) => p.split(',').map(Number));
    expect(line).toHaveLength(4); // point, step across, point, held to today
    expect(line[1]![1]).toBe(line[0]![1]); // flat until the second change
    expect(line[1]![0]).toBe(line[2]![0]); // then straight up
    expect(line[3]![1]).toBe(line[2]![1]);
    expect(line[3]![0]).toBeGreaterThan(line[2]![0]);
  });

  it('breaks the line where progress went back to none (the last check-in deleted)', () => {
    const svg = progressChartSvg(goal, [at('2026-01-10', 10), at('2026-01-20', null, 'checkin_deleted'), at('2026-02-01', 25)], now);
    expect(svg.match(/<polyline [^>]*stroke="#2563eb"/g)).toHaveLength(2);
  });

  it('without history it says so, and still draws the axes and the pace line; today off the chart is not marked', () => {
    const svg = progressChartSvg(goal, [], new Date('2027-01-01T00:00:00Z'));
    expect(svg).toContain('No progress recorded yet');
    expect(svg).toContain('stroke-dasharray="6 4"');
    expect(svg).not.toContain('>today<');
    expect(count(render(svg).pixels, nonWhite)).toBeGreaterThan(3000);
  });
});
