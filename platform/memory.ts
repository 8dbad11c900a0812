/**
 * Memory the agent uses (decision 0450): three built-in tools on the owner's store namespace,
 * offered to the model only when the thread's config turns memory on.
 */

/** Where an owner's memories live in the Store, as LangGraph's memory examples keep them. */
export const memoryNamespace: readonly string[] = ['memories'];

/** The `source` the memory tools declare, which the registry offers only with memory on. */
export const memoryToolSource = 'memory';
