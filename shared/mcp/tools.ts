import { DIRECTORY_TOOLS } from '#shared/mcp/directory-tools.ts';
import { LIST_EVENTS } from '#shared/mcp/event-tools.ts';
import { GOAL_TOOLS } from '#shared/mcp/goal-tools.ts';
import { GOALS_NEEDING_ATTENTION } from '#shared/mcp/goals-needing-attention.ts';
import type { McpTool } from '#shared/mcp/tool.ts';

/** The MCP tools of contract section 15, in the order tools/list gives them; each tool is defined in its area's module. */
export const TOOLS: McpTool[] = [...GOAL_TOOLS, ...DIRECTORY_TOOLS, GOALS_NEEDING_ATTENTION, LIST_EVENTS];

export const toolByName = new Map(TOOLS.map((t) => [t.name, t]));
