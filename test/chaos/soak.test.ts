/**
 * The soak in CI, through the API: minutes, not seconds, because what goes wrong after a kill
 * (a workflow task timing out on a dead worker's sticky queue, a continue-as-new mid-kill) needs
 * dozens of kills to show. `npm run chaos` runs the same for as long as you like.
 */
import { closeTestClient, testClient } from '../helpers/temporal';
import { runSoak, soakClean } from './soak-run';

const killSeconds = Number(process.env.KEEL_CI_SOAK_SECONDS ?? 180);
const rollingSeconds = Number(process.env.KEEL_CI_ROLLING_SECONDS ?? 60);

jest.setTimeout((killSeconds + rollingSeconds + 600) * 1000);

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

  it(`refuses nothing while each worker is restarted in turn, as a rolling deploy does (${rollingSeconds} s, 10 conversations)`, async () => {
    const summary = await runSoak({
      client: await testClient(),
      seconds: rollingSeconds,
      conversations: 10,
      workers: 2,
      disruption: 'rolling',
      log: (line) => process.stderr.write(`${line}\n`),
    });
    process.stderr.write(`${JSON.stringify(summary, null, 2)}\n`);
    expect(summary.disruptions).toBeGreaterThanOrEqual(2);
    expect({ clean: soakClean(summary), ...summary }).toMatchObject({ clean: true, refused: 0 });
  });
});
