/** Scalar's standalone API reference bundle, served at GET /docs/scalar.js and copied into that function's bundle only. */
export const SCALAR_BUNDLE = 'node_modules/@scalar/api-reference/dist/browser/standalone.js';
