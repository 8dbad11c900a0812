/**
 * What Keel says in its own words: tool results it writes for calls that did not run or did not
 * finish, and the notices people read. The model reads the tool results, so they say what to do.
 */
/** Which of Temporal's timeouts ended a tool call (Temporal's `TimeoutType`, by value). */
export type ToolTimeout = 'HEARTBEAT' | 'START_TO_CLOSE' | 'SCHEDULE_TO_START' | 'SCHEDULE_TO_CLOSE';

/** What became of the worker of a call given up on by its heartbeat timeout, when it could be told. */
export type WorkerFate = 'running' | 'stopped';

/**
 * A heartbeat timeout, by what became of the call's worker (decision 0412): Temporal's timeout is the
 * same for a dead worker and a Temporal outage, so the result says which.
 */
const heartbeatFault: Record<WorkerFate, string> = {
  stopped: 'its worker stopped: Temporal heard no heartbeat from it for 10 s, and it no longer answers',
  running:
    'a Temporal service stopped or could not be reached: its worker still runs, but Temporal heard no heartbeat from it for 10 s',
};

const interruptionFault: Record<ToolTimeout, string> = {
  HEARTBEAT:
    'Temporal heard no heartbeat from it for 10 s: its worker stopped, or lost its connection to a Temporal service that stopped',
  START_TO_CLOSE: 'it ran past its 15-minute limit',
  SCHEDULE_TO_START: 'no worker took it in time',
  SCHEDULE_TO_CLOSE: 'it ran past its overall time limit',
};

export const say = {
  quotaShare: "the run's share of its owner's quota is the lesser ceiling",
  unknownTool: (tool: string, known: readonly string[]): string =>
    `Unknown tool "${tool}".${known.length > 0 ? ` This worker has: ${known.join(', ')}.` : ''}`,

  deniedByRule: (tool: string): string =>
    `Tool "${tool}" is denied by this thread's rules; it did not run. Do not retry it.`,

  deniedByUser: (tool: string, reason: string | undefined): string =>
    `The user denied this ${tool} call; it did not run.` +
    (reason === undefined ? '' : ` Their reason: ${reason}`),

  notApprovedInTime: (tool: string, seconds: number): string =>
    `The ${tool} call was not approved in time (no decision within ${seconds} s); it did not run.`,

  /** A call still unfinished when its run was cancelled or interrupted. */
  didNotFinish: (why: string, mayHavePartlyRun: boolean): string =>
    `Tool did not finish (${why}).${mayHavePartlyRun ? ' The tool may have partly run.' : ''}`,

  /**
   * A side-effecting call Temporal gave up on by `timeout`: it had one attempt only. A missed
   * heartbeat is all Temporal knows: the worker may have stopped, or a Temporal service between
   * them (frontend, history) may have gone, with the worker still running (issue 36). `worker`,
   * when the workflow could ask (decision 0412), says which.
   */
  interrupted: (tool: string, timeout: ToolTimeout, worker?: WorkerFate): string =>
    `Tool "${tool}" was interrupted (${
      timeout === 'HEARTBEAT' && worker !== undefined ? heartbeatFault[worker] : interruptionFault[timeout]
    }) and may have partly run; it was not run again.`,

  toolFailed: (tool: string, message: string): string => `Tool "${tool}" failed: ${message}`,

  /** The notice appended for people when a run fails (models never see it). */
  runFailed: (message: string): string => `The run failed: ${message}`,

  approvalTimedOut: 'a tool call was not approved in time; send a message to continue',

  maxSteps: (maxSteps: number): string => `the run reached its limit of ${maxSteps} model calls`,

  cancelledOnRequest: 'cancelled on request',

  interruptedBy: (runId: string): string => `interrupted by run ${runId}`,

  threadClosed: 'the thread was closed',

  /** A fork whose checkpoint was compacted or dropped before its run could start. */
  checkpointGone: (checkpointId: string): string =>
    `checkpoint ${checkpointId} is no longer kept on this thread; the run did not start`,
};
