import type { Route, Worker } from '#shared/routes/types.ts';

export const documentRoutes: Route[] = [];

export const documentWorkers: Worker[] = [];
