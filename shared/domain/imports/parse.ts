import { BadRequestError, ValidationError } from '#shared/errors.ts';
import { IMPORT_MAX_ROWS } from '#shared/domain/imports/entity.ts';

/** Columns (and JSON row fields) an import row may have (contract 13). */
export const IMPORT_COLUMNS = [
  'ref',
  'kind',
  'title',
  'time_period_uuid',
  'description',
  'goal_type',
  'owner_uuids',
  'team_uuids',
  'labels',
  'parent_refs',
  'parents',
  'metric',
] as const;
const LIST_COLUMNS = new Set(['owner_uuids', 'team_uuids', 'labels', 'parent_refs', 'parents']);
const METRIC_COLUMNS = new Set(['metric.name', 'metric.start_value', 'metric.target_value', 'metric.unit', 'metric.metric_type']);
const NUMBER_FIELDS = new Set(['start_value', 'target_value']);

/**
 * The rows of an import, unvalidated: the JSON body's `goals`, or the rows of a CSV body. Refused here,
 * before anything is stored: CSV that cannot be read or has an unknown column (400), no rows or more than
 * IMPORT_MAX_ROWS (422).
 */
export async function importRows(body: { json?: unknown[]; csv?: string }): Promise<unknown[]> {
  const rows = body.csv !== undefined ? csvRows(body.csv, await csvParser()) : (body.json ?? []);
  if (rows.length === 0) throw ValidationError.field('goals', 'empty', 'An import needs at least one row');
  if (rows.length > IMPORT_MAX_ROWS)
    throw ValidationError.field('goals', 'too_many', `An import takes at most ${IMPORT_MAX_ROWS} rows (got ${rows.length})`);
  return rows;
}

/** A file as the command line reads it: CSV by its name, else JSON `{ goals: [...] }`. */
export async function importFileRows(text: string, csv: boolean): Promise<unknown[]> {
  if (csv) return importRows({ csv: text });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BadRequestError('The file is neither CSV (.csv) nor JSON');
  }
  // the JSON body's envelope, as the route's schema has it (ImportEnvelope, shared/schemas/bodies/import-envelope.ts)
  const goals =
    body !== null && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 1
      ? (body as { goals?: unknown }).goals
      : undefined;
  if (!Array.isArray(goals)) throw new BadRequestError('A JSON import file is { "goals": [ ... ] }');
  return importRows({ json: goals });
}

type CsvParse = typeof import('csv-parse/sync').parse;
let csvParse: Promise<CsvParse> | undefined;
/** csv-parse, imported with the first CSV body rather than at cold start (most imports are JSON). */
const csvParser = () => (csvParse ??= import('csv-parse/sync').then((m) => m.parse));

/**
 * CSV with a header row of the row field names; list cells separated by `|`; the metric as a JSON cell
 * `metric` or as `metric.<field>` columns. An empty cell is an omitted field.
 */
function csvRows(text: string, parse: CsvParse): unknown[] {
  let records: string[][];
  try {
    records = parse(text, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: false });
  } catch (err) {
    throw new BadRequestError(`The CSV file cannot be read: ${(err as Error).message}`, [
      { field: 'body', code: 'invalid_csv', message: (err as Error).message },
    ]);
  }
  const [header, ...data] = records;
  if (!header) return [];
  const unknown = header.filter((h) => !(IMPORT_COLUMNS as readonly string[]).includes(h) && !METRIC_COLUMNS.has(h));
  if (unknown.length)
    throw new BadRequestError(
      `Unknown CSV column ${unknown.join(', ')}`,
      unknown.map((h) => ({ field: h, code: 'unknown_field', message: `unknown column ${h}; columns: ${IMPORT_COLUMNS.join(', ')}` })),
    );
  const seen = new Set<string>();
  for (const h of header) {
    if (seen.has(h))
      throw new BadRequestError(`CSV column ${h} appears twice`, [{ field: h, code: 'duplicate_column', message: 'appears twice' }]);
    seen.add(h);
  }
  return data.map((cells) => csvRow(header, cells));
}

function csvRow(header: string[], cells: string[]): Record<string, unknown> {
  const row = new Map<string, unknown>();
  const metric = new Map<string, unknown>();
  header.forEach((h, i) => {
    const cell = cells[i] ?? '';
    if (cell === '') return;
    if (METRIC_COLUMNS.has(h)) {
      const field = h.slice('metric.'.length);
      metric.set(field, NUMBER_FIELDS.has(field) && cell.trim() !== '' && Number.isFinite(Number(cell)) ? Number(cell) : cell);
    } else if (h === 'metric') {
      row.set('metric', jsonCell(cell));
    } else if (LIST_COLUMNS.has(h)) {
      row.set(
        h,
        cell
          .split('|')
          .map((s) => s.trim())
          .filter((s) => s !== ''),
      );
    } else row.set(h, cell);
  });
  if (metric.size) row.set('metric', { ...(row.get('metric') as object | undefined), ...Object.fromEntries(metric) });
  return Object.fromEntries(row);
}

/** A JSON cell; text that is not JSON is kept as text (the row check then names the field). */
function jsonCell(cell: string): unknown {
  try {
    return JSON.parse(cell);
  } catch {
    return cell;
  }
}
