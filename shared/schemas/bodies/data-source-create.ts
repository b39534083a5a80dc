import * as z from 'zod';
import { nonBlank, uuid } from '#shared/schemas/bodies/fields.ts';

/** Largest data source config accepted, as JSON: keeps the item (and the goal's transaction) small. */
export const DATA_SOURCE_CONFIG_MAX_BYTES = 16 * 1024;
/** Nesting of objects and arrays in a config, the config itself being level 1 (DynamoDB keeps 32 in an item). */
export const DATA_SOURCE_CONFIG_MAX_DEPTH = 10;
/** Keys a client may not use: they name JavaScript's prototype machinery, which a plain object would not keep. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Why a config (already parsed JSON) cannot be stored and returned exactly as sent, as 422 issues with paths.
 * Checked on the raw input before the record schema copies it: a copy made by assignment drops `__proto__`.
 */
function configIssues(config: unknown): Array<{ path: PropertyKey[]; message: string; code: string }> {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return []; // the record schema reports the type
  const issues: Array<{ path: PropertyKey[]; message: string; code: string }> = [];
  const stack: Array<{ value: unknown; path: string[] }> = [{ value: config, path: [] }];
  while (stack.length && issues.length < 20) {
    const { value, path } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (path.length >= DATA_SOURCE_CONFIG_MAX_DEPTH) {
      issues.push({ path, code: 'too_deep', message: `config nests at most ${DATA_SOURCE_CONFIG_MAX_DEPTH} levels of objects and arrays` });
      continue;
    }
    for (const [k, v] of Object.entries(value)) {
      if (!Array.isArray(value)) {
        if (k === '') issues.push({ path: [...path, k], code: 'invalid_key', message: 'config keys must not be empty' });
        else if (RESERVED_KEYS.has(k)) issues.push({ path: [...path, k], code: 'invalid_key', message: `config key ${k} is reserved` });
      }
      stack.push({ value: v, path: [...path, k] });
    }
  }
  if (!issues.length && Buffer.byteLength(JSON.stringify(config), 'utf8') > DATA_SOURCE_CONFIG_MAX_BYTES) {
    issues.push({ path: [], code: 'too_large', message: `must be at most ${DATA_SOURCE_CONFIG_MAX_BYTES} bytes as JSON` });
  }
  return issues;
}

export const dataSourceConfig = z.preprocess(
  (value, ctx) => {
    for (const issue of configIssues(value))
      ctx.addIssue({ code: 'custom', input: value, path: issue.path, message: issue.message, params: { code: issue.code } });
    return value;
  },
  z.record(z.string(), z.unknown()),
);

export const DataSourceCreateBody = z
  .strictObject({
    goal_uuid: uuid.meta({ description: 'A goal of any kind the caller can update (403 otherwise); unknown in the tenant: 422.' }),
    name: nonBlank(200),
    kind: nonBlank(100).meta({
      description:
        'The source type. http_json and push are synced (contract section 16); any other (a connector key such as salesforce) is a record only.',
    }),
    config: dataSourceConfig.optional().meta({
      description: `http_json: { url (https; the local stack also accepts http on 127.0.0.1), json_pointer (RFC 6901), headers? (values write-only, sealed, sent only to the origin of url), every_minutes (15-1440, default 60) }; push: none. Other kinds: opaque settings, default {}, returned exactly as sent. Shown to everyone who can see the goal, so keys naming a credential (password, secret, token, api_key, ...) are refused (422). Keys are non-empty and not __proto__, constructor or prototype; at most ${DATA_SOURCE_CONFIG_MAX_DEPTH} levels of objects and arrays and ${DATA_SOURCE_CONFIG_MAX_BYTES} bytes as JSON (422 otherwise).`,
    }),
  })
  .meta({ id: 'DataSourceCreateBody' });
