import type { Route } from '#shared/routes/types.ts';
import { LabelCreateBody, LabelListResponse, LabelResponse, LabelUpdateBody } from '#shared/schemas/labels.ts';

export const labelRoutes: Route[] = [
  {
    method: 'GET',
    path: '/rest/v2/labels',
    handler: 'functions/labels/list.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:read',
    table: 'read',
    doc: { summary: 'List labels and label groups', tag: 'labels', list: true, success: { status: 200, schema: LabelListResponse } },
  },
  {
    method: 'POST',
    path: '/rest/v2/labels',
    handler: 'functions/labels/create.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:write',
    table: 'write',
    doc: {
      summary: 'Create a label or label group (admins and members); name unique per tenant ignoring case',
      tag: 'labels',
      body: LabelCreateBody,
      success: { status: 201, schema: LabelResponse },
    },
  },
  {
    method: 'GET',
    path: '/rest/v2/labels/{id}',
    handler: 'functions/labels/get.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:read',
    table: 'read',
    doc: { summary: 'Get a label', tag: 'labels', success: { status: 200, schema: LabelResponse } },
  },
  {
    method: 'PUT',
    path: '/rest/v2/labels/{id}',
    handler: 'functions/labels/update.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:write',
    table: 'write',
    doc: {
      summary: 'Update a label (admins or its creator)',
      tag: 'labels',
      body: LabelUpdateBody,
      success: { status: 200, schema: LabelResponse },
    },
  },
  {
    method: 'DELETE',
    path: '/rest/v2/labels/{id}',
    handler: 'functions/labels/delete.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:write',
    table: 'write',
    doc: {
      summary: 'Delete a label (admins or its creator); a group is deleted with its child labels. Returns the deleted label.',
      tag: 'labels',
      success: { status: 200, schema: LabelResponse },
    },
  },
];
