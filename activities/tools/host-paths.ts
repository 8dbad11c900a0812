/**
 * Tool results and errors the model reads name no path of the host (issue 29): the workspace is
 * `/workspace` to it, as inside the sandbox, and any other absolute path is left out. The operator's
 * log keeps the original (a failure's `cause`, the worker's start line).
 */
import { sandboxWorkspace } from './sandbox';

/** `text` with the workspace as the sandbox names it and every other absolute path hidden. */
export function withoutHostPaths(text: string, workspace?: string): string {
  const named = workspace === undefined ? text : text.split(workspace).join(sandboxWorkspace);
  return named.replace(/(?<![\w.~])\/(?!workspace\b)[^\s:'"`()]+/g, '<host path>');
}
