/** LangGraph's system endpoints: `/ok` (liveness) and `/info` (what this server is and can do). */
import { Router } from 'express';
import { z } from 'zod';
import { keelVersion as version } from '../../platform/package-root';
import { operation, route } from '../contract';

/** Keel's version, as `/info` reports it (and the MCP server names itself). */
export const serverVersion = version;

export const ok = operation({
  method: 'get',
  path: '/ok',
  summary: 'Liveness, as LangGraph names it',
  public: true,
  responses: { 200: { description: 'ok', schema: z.object({ ok: z.literal(true) }) } },
});

export const info = operation({
  method: 'get',
  path: '/info',
  summary: 'Server version and capabilities',
  public: true,
  responses: {
    200: {
      description: 'What this server is and can do',
      schema: z.object({
        version: z.string(),
        server: z.string(),
        flags: z.record(z.string(), z.boolean()),
        /** Present when the operator chose something unsafe, e.g. an unconfined shell. */
        warnings: z.array(z.string()).optional(),
      }),
    },
  },
});

export const systemOperations = [ok, info];

/** What `/info` warns about when the bash tool runs unconfined (`KEEL_SANDBOX=off`). */
export const sandboxOffWarning =
  "KEEL_SANDBOX=off: the bash tool runs model-chosen commands unconfined, with the worker's files, network and processes";

/** `sandbox`: the configured mode; `off` adds a `warnings` entry to `/info`. */
export function systemRoutes(sandbox: 'on' | 'off' = 'on'): Router {
  const router = Router();
  route(router, ok, (_request, response) => {
    response.json({ ok: true });
  });
  route(router, info, (_request, response) => {
    response.json({
      version,
      server: 'keel',
      flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: false },
      ...(sandbox === 'off' ? { warnings: [sandboxOffWarning] } : {}),
    });
  });
  return router;
}
