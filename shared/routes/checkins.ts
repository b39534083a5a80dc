import type { Route } from '#shared/routes/types.ts';
import {
  CheckinCreateBody,
  CheckinListResponse,
  CheckinRecordSchema,
  CheckinResponse,
  CheckinUpdateBody,
} from '#shared/schemas/checkins.ts';

export const checkinRoutes: Route[] = [
  {
    method: 'GET',
    path: '/rest/v2/checkins',
    handler: 'functions/checkins/list.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:read',
    table: 'read',
    doc: {
      summary: 'List check-ins of goals the caller can see',
      tag: 'checkins',
      list: true,
      success: { status: 200, schema: CheckinListResponse },
    },
  },
  {
    method: 'POST',
    path: '/rest/v2/checkins',
    handler: 'functions/checkins/create.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:write',
    table: 'write',
    doc: {
      summary: 'Check in on a goal (caller must be able to edit it); the goal follows its latest check-in',
      tag: 'checkins',
      body: CheckinCreateBody,
      success: { status: 201, schema: CheckinResponse },
    },
  },
  {
    method: 'GET',
    path: '/rest/v2/checkins/{id}',
    handler: 'functions/checkins/get.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:read',
    table: 'read',
    doc: {
      summary: 'Get a check-in (its goal must be visible to the caller)',
      tag: 'checkins',
      success: { status: 200, schema: CheckinResponse },
    },
  },
  {
    method: 'PUT',
    path: '/rest/v2/checkins/{id}',
    handler: 'functions/checkins/update.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:write',
    table: 'write',
    doc: {
      summary: 'Update a check-in; returns the flat check-in record',
      tag: 'checkins',
      body: CheckinUpdateBody,
      success: { status: 200, schema: CheckinRecordSchema },
    },
  },
  {
    method: 'DELETE',
    path: '/rest/v2/checkins/{id}',
    handler: 'functions/checkins/delete.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:write',
    table: 'write',
    doc: {
      summary: 'Delete a check-in; returns the flat deleted record. The goal follows the check-in latest afterwards.',
      tag: 'checkins',
      success: { status: 200, schema: CheckinRecordSchema },
    },
  },
];
