/**
 * Ports `keel up` will listen on, checked before anything starts: a taken port is refused with one
 * sentence that names it, never a crash loop and never an attach to someone else's server.
 * The check can race with another program; each process also refuses on its own listen error.
 */
import { createServer } from 'node:net';
import { KeelError } from '../common/errors';

export interface PortUse {
  host: string;
  port: number;
  /** Whose port, as the sentence starts: "The API's port". */
  whose: string;
  /** What to do, after "is in use": "stop it, or set KEEL_API_PORT to another port". */
  remedy: string;
}

/** A start refused because a port is taken; its message is the one sentence to show. */
export class PortTaken extends KeelError {
  override readonly name = 'PortTaken';
  constructor(readonly use: PortUse) {
    super(`${use.whose} ${use.port} on ${use.host} is in use: ${use.remedy}.`);
  }
}

async function isFree(host: string, port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise<boolean>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' ? resolve(false) : reject(error),
    );
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

/** Throws `PortTaken` for the first of `uses` something already listens on (port 0 is any port: never taken). */
export async function requireFreePorts(uses: PortUse[]): Promise<void> {
  for (const use of uses) if (use.port !== 0 && !(await isFree(use.host, use.port))) throw new PortTaken(use);
}
