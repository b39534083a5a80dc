import type { Route } from '#shared/routes/types.ts';

export const integrationRoutes: Route[] = [];
