import type { Route } from '#shared/routes/types.ts';
import { TeamCreateBody, TeamListResponse, TeamResponse, TeamUpdateBody } from '#shared/schemas/teams.ts';

export const teamRoutes: Route[] = [
  {
    method: 'GET',
    path: '/rest/v2/teams',
    handler: 'functions/teams/list.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:read',
    table: 'read',
    doc: { summary: 'List teams', tag: 'teams', list: true, success: { status: 200, schema: TeamListResponse } },
  },
  {
    method: 'POST',
    path: '/rest/v2/teams',
    handler: 'functions/teams/create.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:write',
    table: 'write',
    doc: {
      summary: 'Create a team with attributes, owners and members (admins)',
      tag: 'teams',
      body: TeamCreateBody,
      success: { status: 201, schema: TeamResponse },
    },
  },
  {
    method: 'GET',
    path: '/rest/v2/teams/{id}',
    handler: 'functions/teams/get.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:read',
    table: 'read',
    doc: { summary: 'Get a team', tag: 'teams', success: { status: 200, schema: TeamResponse } },
  },
  {
    method: 'PUT',
    path: '/rest/v2/teams/{id}',
    handler: 'functions/teams/update.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:write',
    table: 'write',
    doc: {
      summary:
        'Update attributes, owners and members (admins; owners except parent_uuid). A move re-depths the whole subtree atomically (422 when over 100 writes)',
      tag: 'teams',
      body: TeamUpdateBody,
      success: { status: 200, schema: TeamResponse },
    },
  },
  {
    method: 'DELETE',
    path: '/rest/v2/teams/{id}',
    handler: 'functions/teams/delete.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:write',
    table: 'write',
    doc: {
      summary:
        'Delete a team (admins); 422 has_dependents while it has active sub-teams or goals. Archived sub-teams become root teams. Returns the deleted team',
      tag: 'teams',
      success: { status: 200, schema: TeamResponse },
    },
  },
];
