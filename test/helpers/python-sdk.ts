/** LangGraph's Python SDK in a virtualenv of its own (test/helpers/python-venv.ts). */
import path from 'node:path';
import { ensureVenv } from './python-venv';

export { hasPython } from './python-venv';

/** The `langgraph-sdk` release the smoke script runs against. */
export const pythonSdkVersion = '0.4.14';

/** The virtualenv's python, creating the virtualenv first when it is not in the cache yet. */
export async function ensurePythonSdk(): Promise<string> {
  const bin = await ensureVenv({ name: 'python-sdk', requirement: `langgraph-sdk==${pythonSdkVersion}` });
  return path.join(bin, 'python');
}

/** The Python MCP SDK release the MCP test's Python client runs (revision 2026-07-28). */
export const pythonMcpVersion = '2.3.0';

/** A python with the MCP SDK, in a virtualenv of its own made once in the cache. */
export async function ensurePythonMcp(): Promise<string> {
  const bin = await ensureVenv({ name: 'python-mcp', requirement: `mcp==${pythonMcpVersion}` });
  return path.join(bin, 'python');
}
