import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import type { HistoryRecord } from '#shared/domain/history/entity.ts';

/**
 * The progress chart (contract 13) as plain SVG built from code: no chart library and no browser or canvas
 * in the Lambda. A 600x300 viewBox, so it is readable at that size and scales to any width. Pure: the
 * clock (`now`) is an argument.
 *
 * - x: time over the goal's dates (widened to take in history points outside them), ticks labelled with dates;
 * - y: progress 0-100 %, gridlines every 25;
 * - progress: a step line (progress holds until the next change), drawn up to today (or the chart's end),
 *   a gap where progress is null, a dot at each change;
 * - expected pace: dashed, 0 % at start_date to 100 % at end_date (contract 13's expected_progress);
 * - today: a vertical marker, when today is on the chart.
 */
export const CHART_WIDTH = 600;
export const CHART_HEIGHT = 300;
const M = { left: 52, right: 18, top: 34, bottom: 46 };
const PLOT_W = CHART_WIDTH - M.left - M.right;
const PLOT_H = CHART_HEIGHT - M.top - M.bottom;
const DAY = 86_400_000;
const COLORS = {
  progress: '#2563eb',
  pace: '#6b7280',
  today: '#dc2626',
  grid: '#e5e7eb',
  axis: '#374151',
  text: '#111827',
  muted: '#6b7280',
};
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const escapeXml = (s: string) =>
  s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
const fmt = (n: number) => (Math.round(n * 10) / 10).toString();
const dayStart = (date: string) => Date.parse(`${date.slice(0, 10)}T00:00:00Z`);
const label = (t: number) => {
  const d = new Date(t);
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
};

type ChartGoal = Pick<GoalRecord, 'title' | 'start_date' | 'end_date'>;

export function progressChartSvg(goal: ChartGoal, points: HistoryRecord[], now: Date): string {
  const start = dayStart(goal.start_date);
  const end = dayStart(goal.end_date); // expected progress reaches 100 on end_date (pace.ts)
  const times = points.map((p) => Date.parse(p.at)).filter((t) => Number.isFinite(t));
  const x0 = Math.min(start, ...times);
  const x1 = Math.max(end, ...times, x0 + DAY);
  const x = (t: number) => M.left + ((t - x0) / (x1 - x0)) * PLOT_W;
  const y = (p: number) => M.top + PLOT_H - (Math.min(100, Math.max(0, p)) / 100) * PLOT_H;
  const nowMs = now.getTime();
  const out: string[] = [];

  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${CHART_WIDTH} ${CHART_HEIGHT}" width="${CHART_WIDTH}" height="${CHART_HEIGHT}" role="img" aria-labelledby="chart-title" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="11">`,
    `<title id="chart-title">Progress of ${escapeXml(goal.title)} from ${goal.start_date} to ${goal.end_date}</title>`,
    `<rect width="${CHART_WIDTH}" height="${CHART_HEIGHT}" fill="#ffffff"/>`,
    `<text x="${M.left}" y="20" font-size="13" font-weight="bold" fill="${COLORS.text}">${escapeXml(truncate(goal.title, 38))}</text>`,
  );

  // y grid and labels
  for (const p of [0, 25, 50, 75, 100]) {
    out.push(`<line x1="${M.left}" x2="${M.left + PLOT_W}" y1="${fmt(y(p))}" y2="${fmt(y(p))}" stroke="${COLORS.grid}" stroke-width="1"/>`);
    out.push(`<text x="${M.left - 6}" y="${fmt(y(p) + 4)}" text-anchor="end" fill="${COLORS.muted}">${p}%</text>`);
  }
  out.push(
    `<text transform="translate(13 ${fmt(M.top + PLOT_H / 2)}) rotate(-90)" text-anchor="middle" fill="${COLORS.axis}">Progress</text>`,
  );

  // x axis, ticks and labels
  out.push(
    `<line x1="${M.left}" x2="${M.left + PLOT_W}" y1="${M.top + PLOT_H}" y2="${M.top + PLOT_H}" stroke="${COLORS.axis}" stroke-width="1"/>`,
  );
  out.push(`<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + PLOT_H}" stroke="${COLORS.axis}" stroke-width="1"/>`);
  for (const t of dateTicks(x0, x1)) {
    out.push(`<line x1="${fmt(x(t))}" x2="${fmt(x(t))}" y1="${M.top + PLOT_H}" y2="${M.top + PLOT_H + 4}" stroke="${COLORS.axis}"/>`);
    const anchor = x(t) > CHART_WIDTH - M.right - 24 ? 'end' : 'middle'; // the last label stays inside the image
    out.push(`<text x="${fmt(x(t))}" y="${M.top + PLOT_H + 16}" text-anchor="${anchor}" fill="${COLORS.muted}">${label(t)}</text>`);
  }
  out.push(
    `<text x="${fmt(M.left + PLOT_W / 2)}" y="${CHART_HEIGHT - 8}" text-anchor="middle" fill="${COLORS.axis}">Date (UTC), ${escapeXml(goal.start_date)} to ${escapeXml(goal.end_date)}</text>`,
  );

  // expected pace: 0 until start, linear to 100 at the end, 100 after
  const pace = [
    [x0, 0],
    [start, 0],
    [end, 100],
    [x1, 100],
  ]
    .map(([t, p]) => `${fmt(x(t!))},${fmt(y(p!))}`)
    .join(' ');
  out.push(`<polyline points="${pace}" fill="none" stroke="${COLORS.pace}" stroke-width="1.5" stroke-dasharray="6 4"/>`);

  // today
  if (nowMs >= x0 && nowMs <= x1) {
    out.push(
      `<line x1="${fmt(x(nowMs))}" x2="${fmt(x(nowMs))}" y1="${M.top}" y2="${M.top + PLOT_H}" stroke="${COLORS.today}" stroke-width="1" stroke-dasharray="2 2"/>`,
    );
    const right = x(nowMs) < M.left + PLOT_W - 40; // the label beside the marker, inside the plot
    out.push(
      `<text x="${fmt(x(nowMs) + (right ? 4 : -4))}" y="${M.top + 12}" text-anchor="${right ? 'start' : 'end'}" fill="${COLORS.today}">today</text>`,
    );
  }

  // progress: a step line, broken where progress is null, held to today (or the chart's end)
  const holdUntil = Math.min(Math.max(nowMs, times.at(-1) ?? x0), x1);
  const segments: string[][] = [];
  let current: string[] | undefined;
  points.forEach((p, i) => {
    const t = times[i]!;
    if (p.progress === null || p.progress === undefined) {
      current = undefined;
      return;
    }
    if (!current) segments.push((current = []));
    else current.push(`${fmt(x(t))},${current.at(-1)!.split(',')[1]}`);
    current.push(`${fmt(x(t))},${fmt(y(p.progress))}`);
  });
  if (current && holdUntil > (times.at(-1) ?? x1)) current.push(`${fmt(x(holdUntil))},${current.at(-1)!.split(',')[1]}`);
  for (const s of segments)
    out.push(`<polyline points="${s.join(' ')}" fill="none" stroke="${COLORS.progress}" stroke-width="2.5" stroke-linejoin="round"/>`);
  points.forEach((p, i) => {
    if (p.progress !== null && p.progress !== undefined && points.length <= 200)
      out.push(`<circle cx="${fmt(x(times[i]!))}" cy="${fmt(y(p.progress))}" r="3" fill="${COLORS.progress}"/>`);
  });
  if (!points.some((p) => p.progress !== null && p.progress !== undefined)) {
    out.push(
      `<text x="${fmt(M.left + PLOT_W / 2)}" y="${fmt(M.top + PLOT_H / 2)}" text-anchor="middle" fill="${COLORS.muted}">No progress recorded yet</text>`,
    );
  }

  // legend
  const lx = CHART_WIDTH - M.right - 190;
  out.push(`<line x1="${lx}" x2="${lx + 22}" y1="16" y2="16" stroke="${COLORS.progress}" stroke-width="2.5"/>`);
  out.push(`<text x="${lx + 27}" y="20" fill="${COLORS.text}">Progress</text>`);
  out.push(`<line x1="${lx + 88}" x2="${lx + 110}" y1="16" y2="16" stroke="${COLORS.pace}" stroke-width="1.5" stroke-dasharray="6 4"/>`);
  out.push(`<text x="${lx + 115}" y="20" fill="${COLORS.text}">Expected pace</text>`);
  out.push('</svg>');
  return out.join('\n');
}

const truncate = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** About five date ticks at whole days from the first day of the chart, the last one on its last day. */
function dateTicks(x0: number, x1: number): number[] {
  const first = Math.ceil(x0 / DAY) * DAY;
  const last = Math.floor(x1 / DAY) * DAY;
  const days = Math.max(1, Math.round((last - first) / DAY));
  const step = Math.max(1, Math.ceil(days / 5));
  const ticks: number[] = [];
  for (let d = 0; d <= days - step / 2; d += step) ticks.push(first + d * DAY);
  ticks.push(last);
  return ticks;
}
