/**
 * Heartbeats on request (decision 0420). A model call on the live channel beats slowly, at 80 %
 * of its heartbeat timeout, and registers here how to beat at once. The API that takes a Stop
 * asks the worker running the call (its live text endpoint, `POST /beat`), and that beat's
 * answer from Temporal carries the cancel. A request only makes a heartbeat: whether the call
 * stops is what Temporal says, so the request needs no trust beyond the endpoint's token, and the
 * SDK's throttle (1 s) bounds how often any number of requests can make one.
 */

export class BeatRequests {
  readonly #beats = new Map<string, Set<() => void>>();

  /** Registers `beat` for a call of `workflowId` until the returned function is called. */
  add(workflowId: string, beat: () => void): () => void {
    const beats = this.#beats.get(workflowId) ?? new Set();
    this.#beats.set(workflowId, beats);
    beats.add(beat);
    return () => {
      beats.delete(beat);
      if (beats.size === 0 && this.#beats.get(workflowId) === beats) this.#beats.delete(workflowId);
    };
  }

  /** Beats every call of `workflowId` this worker runs now; how many (0: it runs none, nothing done). */
  beatNow(workflowId: string): number {
    const beats = [...(this.#beats.get(workflowId) ?? [])];
    for (const beat of beats) beat();
    return beats.length;
  }

  /** Calls registered now (for tests). */
  get size(): number {
    let count = 0;
    for (const beats of this.#beats.values()) count += beats.size;
    return count;
  }
}
