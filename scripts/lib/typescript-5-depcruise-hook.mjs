// Module resolution hook for dependency-cruiser (`npm run lint:layers`): it parses TypeScript with the
// TypeScript 5 compiler API (`typescript`, found with require.resolve, require and import), which TypeScript 7
// (the project's compiler, a native binary) no longer ships. Its `typescript` is pointed at `typescript-5`, the
// npm alias the client generator uses too (scripts/lib/typescript-5-hook.mjs); everything else keeps TypeScript 7.
// A synchronous hook (module.registerHooks), because dependency-cruiser checks the version with require, which
// the asynchronous hooks of module.register do not see.
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, nextResolve) {
    const fromCruiser = context.parentURL?.includes('/node_modules/dependency-cruiser/');
    if (fromCruiser && (specifier === 'typescript' || specifier.startsWith('typescript/'))) {
      return nextResolve(specifier.replace(/^typescript/, 'typescript-5'), context);
    }
    return nextResolve(specifier, context);
  },
});
