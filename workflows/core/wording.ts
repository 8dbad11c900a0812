/**
 * What Keel says in its own words: tool results it writes for calls that did not run or did not
 * finish, and the notices people read. The model reads the tool results, so they say what to do.
 */
export const say = {
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

  /** A side-effecting call whose worker stopped: it had one attempt only. */
  interrupted: (tool: string): string =>
    `Tool "${tool}" was interrupted (its worker stopped) and may have partly run; it was not run again.`,

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
