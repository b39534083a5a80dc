import { describe, expect, it } from 'vitest';
import { ScimRefusal } from '#shared/scim/errors.ts';
import { parseScimFilter } from '#shared/scim/query.ts';

const USER_URN = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ATTRS = ['userName', 'externalId', 'displayName'];

/** The SCIM refusal a filter gets, as status and scimType. */
function refusal(filter: string) {
  try {
    parseScimFilter(filter, USER_URN, ATTRS);
  } catch (err) {
    if (err instanceof ScimRefusal) return { status: err.status, scimType: err.code.replace(/^scim:/, '') };
    throw err;
  }
  return undefined;
}

describe('SCIM filter attribute names (contract section 19)', () => {
  it('refuses a name part __proto__, constructor or prototype with 400 invalidPath, with or without the schema URN', () => {
    for (const name of ['__proto__', 'constructor', 'prototype', 'name.__proto__', `${USER_URN}:constructor`, 'constructor.prototype'])
      expect(refusal(`${name} eq "x"`), name).toEqual({ status: 400, scimType: 'invalidPath' });
  });

  it('keeps invalidFilter for a name the service does not filter on', () => {
    expect(refusal('title eq "x"')).toEqual({ status: 400, scimType: 'invalidFilter' });
    expect(refusal('toString eq "x"')).toEqual({ status: 400, scimType: 'invalidFilter' });
  });
});
