import type { Route, Worker } from '#shared/routes/types.ts';

export const integrationRoutes: Route[] = [];

export const integrationWorkers: Worker[] = [];
