/** The fields of a partial update body that were sent (undefined means "leave as is"; null clears). */
export const sentFields = <T extends Record<string, unknown>>(input: T): Partial<T> =>
  Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The values without repeats, in first-seen order (a list field's ids, as a set); none for null or undefined. */
export const uniq = <T>(xs: Iterable<T> | null | undefined): T[] => [...new Set(xs ?? [])];
