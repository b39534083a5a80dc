export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const nowIso = () => new Date().toISOString();

/** Today's date in UTC (`YYYY-MM-DD`), the clock goal pace is read against: of `now`, a Date or an ISO timestamp as nowIso writes it. */
export const todayUtc = (now: Date | string = new Date()) => (typeof now === 'string' ? now : now.toISOString()).slice(0, 10);
