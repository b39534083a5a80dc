// Module resolution hook for the client generator (scripts/lib/typescript-client.ts): openapi-typescript
// builds its output with the TypeScript 5 compiler API, which TypeScript 7 (the project's compiler, a native
// binary) no longer ships. Its `import ts from 'typescript'` is pointed at `typescript-5`, an npm alias of
// typescript@5 installed for this generator only; everything else keeps TypeScript 7.
export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'typescript' && context.parentURL?.includes('/node_modules/openapi-typescript/'))
    return nextResolve('typescript-5', context);
  return nextResolve(specifier, context);
}
