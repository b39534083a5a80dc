import type { Route } from '#shared/routes/types.ts';
import { UserCreateBody, UserListResponse, UserResponse, UserUpdateBody } from '#shared/schemas/users.ts';

export const userRoutes: Route[] = [
  {
    method: 'GET',
    path: '/rest/v2/users',
    handler: 'functions/users/list.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:read',
    table: 'read',
    doc: { summary: 'List users', tag: 'users', list: true, success: { status: 200, schema: UserListResponse } },
  },
  {
    method: 'POST',
    path: '/rest/v2/users',
    handler: 'functions/users/create.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:write',
    table: 'write',
    doc: {
      summary: 'Create a user (admins); email unique per tenant ignoring case',
      tag: 'users',
      body: UserCreateBody,
      success: { status: 201, schema: UserResponse },
    },
  },
  {
    method: 'GET',
    path: '/rest/v2/users/{id}',
    handler: 'functions/users/get.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:read',
    table: 'read',
    doc: { summary: 'Get a user', tag: 'users', success: { status: 200, schema: UserResponse } },
  },
  {
    method: 'PUT',
    path: '/rest/v2/users/{id}',
    handler: 'functions/users/update.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:write',
    table: 'write',
    doc: {
      summary: 'Update a user (admins; members their own profile)',
      tag: 'users',
      body: UserUpdateBody,
      success: { status: 200, schema: UserResponse },
    },
  },
];
