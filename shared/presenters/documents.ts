/** Document refresh presentation, above the domain: the start and status bodies, typed by their response schemas. */
import type { z } from 'zod';
import type { RefreshThreadRecord } from '#shared/domain/documents/entity.ts';
import type { RefreshStart } from '#shared/domain/documents/refresh.ts';
import type { RefreshStartResponse, RefreshStatusResponse } from '#shared/schemas/documents.ts';

type Wire<S extends z.ZodType> = z.infer<S>;

/** The status body (spec): skill_status null unless the agent's status code was parseable, completed_at null while running. */
export const presentRefreshStatus = (t: RefreshThreadRecord): Wire<typeof RefreshStatusResponse> => ({
  thread_uuid: t.uuid,
  state: t.state,
  skill_status: t.skill_status,
  summary: t.summary,
  started_at: t.started_at,
  completed_at: t.completed_at,
});

export const presentRefreshStart = ({ thread, alreadyRunning }: RefreshStart): Wire<typeof RefreshStartResponse> => ({
  thread_uuid: thread.uuid,
  state: thread.state,
  already_running: alreadyRunning,
});
