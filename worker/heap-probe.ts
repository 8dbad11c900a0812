/**
 * What the worker's V8 heaps hold once their garbage is collected, for the memory benchmark
 * (decision 0281). The workflows run in the SDK's worker threads, whose heaps no code of Keel's can
 * reach, and whose old generations grow well past what they keep before V8 marks them: the
 * process's RSS counts that garbage too. Through the process's own inspector (the `NodeWorker`
 * domain reaches every worker thread) the probe asks each heap, the main thread's included, to
 * collect its garbage and say what it uses.
 *
 * Only the benchmark turns it on: with `KEEL_HEAP_REPORT=FILE` a SIGUSR2 writes a `HeapReport`
 * to FILE. (Without it the worker does not listen, and SIGUSR2 ends it as Node's default does.)
 */
import { writeFile } from 'node:fs/promises';
import inspector from 'node:inspector';

export interface HeapReport {
  /** ISO time the report was written. */
  at: string;
  /** The main thread first, then each worker thread: its V8 heap in use after a full collection. */
  heaps: { thread: string; usedBytes: number; totalBytes: number }[];
}

interface HeapUsage {
  usedSize: number;
  totalSize: number;
}

function post<T>(session: inspector.Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    session.post(method, params, (error, result) => (error === null ? resolve(result as T) : reject(error)));
  });
}

/** Collects the garbage of every V8 heap in this process and reports what each then uses. */
export async function collectHeaps(): Promise<HeapReport> {
  const session = new inspector.Session();
  session.connect();
  const threads = new Map<string, string>();
  const pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  session.on('NodeWorker.attachedToWorker', (message) => {
    const { sessionId, workerInfo } = message.params as { sessionId: string; workerInfo: { title: string } };
    threads.set(sessionId, workerInfo.title);
  });
  session.on('NodeWorker.receivedMessageFromWorker', (message) => {
    const reply = JSON.parse((message.params as { message: string }).message) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
    };
    const waiting = reply.id === undefined ? undefined : pending.get(reply.id);
    if (waiting === undefined) return;
    pending.delete(reply.id!);
    if (reply.error === undefined) waiting.resolve(reply.result);
    else waiting.reject(new Error(reply.error.message));
  });
  let nextId = 1;
  const inThread = <T>(sessionId: string, method: string): Promise<T> => {
    const id = nextId++;
    const result = new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (result: unknown) => void, reject });
    });
    void post(session, 'NodeWorker.sendMessageToWorker', {
      sessionId,
      message: JSON.stringify({ id, method }),
    });
    return result;
  };
  try {
    await post(session, 'NodeWorker.enable', { waitForDebuggerOnStart: false });
    // The threads already running are announced as the domain is enabled; let the events land.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await post(session, 'HeapProfiler.collectGarbage');
    const main = await post<HeapUsage>(session, 'Runtime.getHeapUsage');
    const heaps: HeapReport['heaps'] = [
      { thread: 'main', usedBytes: main.usedSize, totalBytes: main.totalSize },
    ];
    for (const [sessionId, title] of threads) {
      await inThread(sessionId, 'HeapProfiler.collectGarbage');
      const usage = await inThread<HeapUsage>(sessionId, 'Runtime.getHeapUsage');
      heaps.push({ thread: title, usedBytes: usage.usedSize, totalBytes: usage.totalSize });
    }
    return { at: new Date().toISOString(), heaps };
  } finally {
    await post(session, 'NodeWorker.disable').catch(() => undefined);
    session.disconnect();
  }
}

/** With a report file, a SIGUSR2 collects every heap and writes a `HeapReport` there. */
export function installHeapProbe(reportPath: string | undefined, onError: (error: unknown) => void): void {
  if (reportPath === undefined || reportPath === '') return;
  process.on('SIGUSR2', () => {
    collectHeaps()
      .then((report) => writeFile(reportPath, JSON.stringify(report)))
      .catch(onError);
  });
}
