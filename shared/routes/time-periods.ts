import type { Route } from '#shared/routes/types.ts';
import { TimePeriodCreateBody, TimePeriodListResponse, TimePeriodResponse, TimePeriodUpdateBody } from '#shared/schemas/time-periods.ts';

// Contract section 8: the spec reads time periods but never creates them; these routes are an extension.
export const timePeriodRoutes: Route[] = [
  {
    method: 'GET',
    path: '/rest/v2/time_periods',
    handler: 'functions/time-periods/list.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:read',
    table: 'read',
    doc: {
      summary: 'List time periods',
      tag: 'time_periods',
      extension: true,
      list: true,
      success: { status: 200, schema: TimePeriodListResponse },
    },
  },
  {
    method: 'POST',
    path: '/rest/v2/time_periods',
    handler: 'functions/time-periods/create.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:write',
    table: 'write',
    doc: {
      summary: 'Create a time period (admins)',
      tag: 'time_periods',
      extension: true,
      body: TimePeriodCreateBody,
      success: { status: 201, schema: TimePeriodResponse },
    },
  },
  {
    method: 'GET',
    path: '/rest/v2/time_periods/{id}',
    handler: 'functions/time-periods/get.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:read',
    table: 'read',
    doc: { summary: 'Get a time period', tag: 'time_periods', extension: true, success: { status: 200, schema: TimePeriodResponse } },
  },
  {
    method: 'PUT',
    path: '/rest/v2/time_periods/{id}',
    handler: 'functions/time-periods/update.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:write',
    table: 'write',
    doc: {
      summary: 'Update a time period (admins); dates cannot move past goals of the period',
      tag: 'time_periods',
      extension: true,
      body: TimePeriodUpdateBody,
      success: { status: 200, schema: TimePeriodResponse },
    },
  },
  {
    method: 'DELETE',
    path: '/rest/v2/time_periods/{id}',
    handler: 'functions/time-periods/delete.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:write',
    table: 'write',
    doc: {
      summary: 'Delete a time period (admins); refused (422 has_dependents) while non-discarded goals use it. Returns the deleted period.',
      tag: 'time_periods',
      extension: true,
      success: { status: 200, schema: TimePeriodResponse },
    },
  },
];
