/** LangGraph's system endpoints: `/ok` (liveness) and `/info` (what this server is and can do). */
import { Router } from 'express';
import { version } from '../../package.json';

/** What `/info` warns about when the bash tool runs unconfined (`KEEL_SANDBOX=off`). */
export const sandboxOffWarning =
  "KEEL_SANDBOX=off: the bash tool runs model-chosen commands unconfined, with the worker's files, network and processes";

/** `sandbox`: the configured mode; `off` adds a `warnings` entry to `/info`. */
export function systemRoutes(sandbox: 'on' | 'off' = 'on'): Router {
  const router = Router();
  router.get('/ok', (_request, response) => {
    response.json({ ok: true });
  });
  router.get('/info', (_request, response) => {
    response.json({
      version,
      server: 'keel',
      flags: { assistants: true, crons: false, langsmith: false, langsmith_tracing_replicas: false },
      ...(sandbox === 'off' ? { warnings: [sandboxOffWarning] } : {}),
    });
  });
  return router;
}
