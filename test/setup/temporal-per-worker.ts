/**
 * Points this jest worker's test files at its own dev server of the run's (global-setup.ts starts
 * one per worker), so the workers' loads never meet in one server.
 */
const addresses = (process.env.KEEL_TEST_TEMPORAL_ADDRESSES ?? '')
  .split(',')
  .filter((address) => address !== '');
if (addresses.length > 0) {
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  process.env.KEEL_TEST_TEMPORAL_ADDRESS = addresses[(worker - 1) % addresses.length];
}
