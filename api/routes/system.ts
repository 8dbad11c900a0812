/** LangGraph's system endpoints: `/ok` (liveness) and `/info` (what this server is and can do). */
import { Router } from 'express';
import { version } from '../../package.json';

export function systemRoutes(): Router {
  const router = Router();
  router.get('/ok', (_request, response) => {
    response.json({ ok: true });
  });
  router.get('/info', (_request, response) => {
    response.json({
      version,
      server: 'keel',
      flags: { assistants: true, crons: false, langsmith: false, langsmith_tracing_replicas: false },
    });
  });
  return router;
}
