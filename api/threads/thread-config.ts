/**
 * A thread's configuration from what its creator asked and the operator's defaults, within what
 * the operator allows.
 */
import { formatHostEntry, notCoveredBy, parseHostEntry, type HostEntry } from '../../platform/network-hosts';
import { ApiError } from '../errors';

/**
 * The hosts asked for, each within the operator's `KEEL_SANDBOX_NETWORK_HOSTS`, in canonical
 * form (what the worker's proxy compares); else 422 saying which and why.
 */
export function grantNetworkHosts(asked: readonly string[], granted: readonly HostEntry[]): string[] {
  return asked.map((raw) => {
    const entry = parseHostEntry(raw);
    const why =
      typeof entry === 'string'
        ? entry
        : granted.length === 0
          ? 'KEEL_SANDBOX_NETWORK_HOSTS is empty'
          : notCoveredBy(granted, entry);
    if (typeof entry === 'string' || why !== undefined)
      throw new ApiError(
        422,
        'network_host_not_allowed',
        `network host "${raw}" is not one the operator allows threads to reach (${why})`,
        'config.network_hosts',
      );
    return formatHostEntry(entry);
  });
}
