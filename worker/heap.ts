/**
 * The young generation of the workflow threads' V8 heaps. An activation allocates megabytes of
 * short-lived objects (the activation and its payloads, their protobuf and JSON forms, the
 * state's views), more the longer the conversation. With V8's default semi-space (16 MiB) they
 * are scavenged again and again, and the scavenges' helper threads cost a long conversation's
 * turn more CPU than the workflow code itself (decision 0240).
 */
import v8 from 'node:v8';

/**
 * The largest semi-space, MiB: a busy heap's young generation grows to twice this. 32 saved as
 * much CPU as 64 within the noise, and the worker's resident memory did not grow (64: +60 MiB).
 */
export const maxSemiSpaceMb = 32;

/**
 * Sets V8's semi-space limit for every heap created from now on: the workflow threads the SDK
 * starts with each worker, where the scavenges were. (The process's own heap was sized at its
 * start; the flag on the worker's command line saved nothing more.)
 */
export function tuneWorkflowHeaps(): void {
  v8.setFlagsFromString(`--max-semi-space-size=${maxSemiSpaceMb}`);
}
