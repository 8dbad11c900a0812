/**
 * The soak in CI, through the API: minutes, not seconds, because what goes wrong after a kill
 * (a workflow task timing out on a dead worker's sticky queue, a continue-as-new mid-kill) needs
 * dozens of kills to show. `npm run chaos` runs the same for as long as you like, and with
 * SOAK_DISRUPTION=rolling a rolling deploy; in CI a rolling deploy mid-conversation is
 * test/chaos/cluster.test.ts's, twice: the supervisor's (SIGUSR2, every worker host replaced) and
 * a build 2 rolled out worker by worker, each asserting nothing refused, failed or lost
 * (decision 0515).
 */
import { closeTestClient, testClient } from '../helpers/temporal';
import { runSoak, soakClean } from './soak-run';

const killSeconds = Number(process.env.KEEL_CI_SOAK_SECONDS ?? 180);

jest.setTimeout((killSeconds + 600) * 1000);

afterAll(closeTestClient);

describe('conversations chatting through the API while workers are disrupted', () => {
  it(`refuses, loses, doubles and orphans nothing while a worker is SIGKILLed every 2–6 s (${killSeconds} s)`, async () => {
    const summary = await runSoak({
      client: await testClient(),
      seconds: killSeconds,
      conversations: 6,
      workers: 2,
      disruption: 'kill',
      log: (line) => process.stderr.write(`${line}\n`),
    });
    process.stderr.write(`${JSON.stringify(summary, null, 2)}\n`);
    // Every 2–6 s after the last replacement is ready (a worker starts in seconds, slower on a loaded machine).
    expect(summary.disruptions).toBeGreaterThanOrEqual(Math.floor(killSeconds / 20));
    expect(summary.turns_completed).toBeGreaterThan(0);
    expect({ clean: soakClean(summary), ...summary }).toMatchObject({ clean: true, refused: 0 });
  });
});
