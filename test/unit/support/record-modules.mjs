// Loader hook for pure-core.test.ts: appends every module URL the process resolves to the file named by
// RECORD_MODULES_TO, so the parent can tell what importing a module pulled in.
import { register } from 'node:module';
const hooks = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const out = await next(specifier, context);
  appendFileSync(process.env.RECORD_MODULES_TO, out.url + '\\t' + (context.parentURL ?? '') + '\\n');
  return out;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
