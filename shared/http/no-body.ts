import * as z from 'zod';

/**
 * The body of a route that takes none: absent, empty or `{}`; any field is unknown (400, contract section 1).
 * Its own module so that apiHandler can import it lazily: an `import('zod')` would keep all of zod (a
 * dynamically imported module keeps every export), this keeps only what the schemas use.
 */
export const NO_BODY = z.strictObject({});
