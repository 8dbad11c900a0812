/** `keel threads list|show|export|cleanup|delete` and `keel approve|deny`: thin calls to the API. */
import { writeFile } from 'node:fs/promises';
import type { Run } from '../common/run';
import type { ThreadListing } from '../api/threads/thread-directory';
import type { KeelApiClient } from './api-client';
import { budgetLine, quotaLine } from './budget-lines';
import { styleFor, type Style } from './style';

type Write = (text: string) => void;

export interface ListOptions {
  status?: string[];
  owner?: string;
  metadata?: string[];
  olderThanDays?: number;
  limit?: number;
  json?: boolean;
}

/** `key=value` pairs; a value that parses as JSON is taken as JSON (so `n=3` matches the number 3). */
export function parseMetadata(pairs: string[] = []): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new Error(`metadata filter "${pair}" must look like key=value`);
    const raw = pair.slice(equals + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // A plain string.
    }
    metadata[pair.slice(0, equals)] = value;
  }
  return metadata;
}

function filterBody(options: ListOptions): Record<string, unknown> {
  return {
    ...(options.status === undefined ? {} : { status: options.status }),
    ...(options.owner === undefined ? {} : { owner: options.owner }),
    ...(options.metadata === undefined ? {} : { metadata: parseMetadata(options.metadata) }),
    ...(options.olderThanDays === undefined ? {} : { older_than_days: options.olderThanDays }),
  };
}

/** Metadata as `key=value` pairs, cut to `chars`: a column, not JSON. */
function metadataCell(metadata: Record<string, unknown>, chars = 40): string {
  const text = Object.entries(metadata)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  return text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}

/** Rows under a header, each column as wide as its widest cell; the last column is not padded. */
export function table(header: string[], rows: string[][], style: Style): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [style.dim(line(header)), ...rows.map(line)];
}

/**
 * `keel threads list`: a table for people (newest first); `--json` prints the listing as the
 * API gives it, for programs.
 */
export async function listThreads(
  api: KeelApiClient,
  options: ListOptions,
  write: Write,
  style: Style = styleFor({}, {}),
): Promise<void> {
  const threads = await api.request<ThreadListing[]>('POST', '/threads/search', {
    ...filterBody(options),
    ...(options.limit === undefined ? {} : { limit: options.limit }),
  });
  if (options.json === true) return write(JSON.stringify(threads, null, 2));
  if (threads.length === 0) return write('no threads');
  for (const line of listingTable(threads, style)) write(line);
}

/** Threads as a table: id, status, model, runs, cost, created, metadata. */
function listingTable(threads: ThreadListing[], style: Style): string[] {
  const rows = threads.map((thread) => [
    thread.thread_id,
    thread.status,
    thread.model ?? '',
    String(thread.turns),
    `$${thread.cost_usd.toFixed(4)}`,
    thread.created_at.replace('T', ' ').replace(/\.\d+Z$/, 'Z'),
    metadataCell(thread.metadata),
  ]);
  return table(['THREAD', 'STATUS', 'MODEL', 'RUNS', 'COST', 'CREATED', 'METADATA'], rows, style);
}

export async function showThread(api: KeelApiClient, threadId: string, write: Write): Promise<void> {
  const [thread, runs, quota] = await Promise.all([
    api.getThread(threadId),
    api.listRuns(threadId, 10),
    // An API of an earlier release has no quotas: the line is left out.
    api.getQuota().catch(() => undefined),
  ]);
  const { summary } = thread;
  write(`thread   ${thread.thread_id} (${thread.status})`);
  write(
    `model    ${thread.config.model}, approval ${thread.config.approval} (timeout ${thread.config.approval_timeout_s}s)`,
  );
  const limits = [
    ...(thread.config.max_tokens === undefined ? [] : [`${thread.config.max_tokens} tokens`]),
    ...(thread.config.max_cost_usd === undefined ? [] : [`$${thread.config.max_cost_usd}`]),
  ];
  write(`limits   ${limits.length === 0 ? 'none' : limits.join(', ')}`);
  if (thread.budget !== undefined) write(`budget   ${budgetLine(thread.budget)}`);
  const owner = quota === undefined ? undefined : quotaLine(quota);
  if (owner !== undefined) write(`quota    ${owner}`);
  write(
    `summary  ${summary.runs} runs, ${summary.steps} model calls, ${summary.tokens} tokens, $${summary.cost_usd.toFixed(4)}, ${(summary.duration_ms / 1000).toFixed(1)}s`,
  );
  write(`created  ${thread.created_at}; ${thread.messages_count} messages`);
  if (Object.keys(thread.metadata).length > 0) write(`metadata ${JSON.stringify(thread.metadata)}`);
  for (const run of runs) write(runLine(run));
}

function runLine(run: Run): string {
  const reason = run.status_reason === undefined ? '' : ` (${run.status_reason})`;
  return `  run ${run.run_id} ${run.status}${reason} ${run.steps} steps $${run.usage.cost_usd.toFixed(4)} ${run.created_at}`;
}

export async function exportThread(
  api: KeelApiClient,
  threadId: string,
  options: { format: 'json' | 'markdown'; output?: string },
  write: Write,
): Promise<void> {
  const body = await api.request<unknown>(
    'GET',
    `/threads/${encodeURIComponent(threadId)}/export?format=${options.format}`,
  );
  const text = typeof body === 'string' ? body : `${JSON.stringify(body, null, 2)}\n`;
  if (options.output === undefined) return write(text.trimEnd());
  await writeFile(options.output, text);
  write(`wrote ${options.output}`);
}

export async function cleanupThreads(
  api: KeelApiClient,
  options: ListOptions & { olderThanDays: number; yes?: boolean },
  write: Write,
): Promise<void> {
  const result = await api.request<{
    threads: ThreadListing[];
    deleted: string[];
    failed: Array<{ thread_id: string; message: string }>;
  }>('POST', '/threads/cleanup', { ...filterBody(options), dry_run: options.yes !== true });
  if (options.yes !== true) {
    write(`dry run: ${result.threads.length} thread(s) would be closed and deleted (add --yes to do it)`);
    if (result.threads.length > 0)
      for (const line of listingTable(result.threads, styleFor({}, {}))) write(line);
    return;
  }
  write(`deleted ${result.deleted.length} thread(s)`);
  for (const id of result.deleted) write(`  ${id}`);
  for (const failure of result.failed) write(`  failed ${failure.thread_id}: ${failure.message}`);
  if (result.failed.length > 0) throw new Error(`${result.failed.length} thread(s) could not be deleted`);
}

export async function deleteThread(api: KeelApiClient, threadId: string, write: Write): Promise<void> {
  await api.request('DELETE', `/threads/${encodeURIComponent(threadId)}`);
  write(`deleted ${threadId}`);
}

export async function decide(
  api: KeelApiClient,
  threadId: string,
  approvalId: string,
  decision: 'approve' | 'deny',
  reason: string | undefined,
  write: Write,
): Promise<void> {
  await api.decide(threadId, approvalId, decision, reason);
  write(`${decision === 'approve' ? 'approved' : 'denied'} ${approvalId}`);
}
