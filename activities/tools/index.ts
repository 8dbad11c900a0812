export { bashTool } from './bash';
export { deleteFileTool, editFileTool, listFilesTool, readFileTool, writeFileTool } from './files';
export { ToolRegistry, defineTool, type Tool, type ToolContext } from './registry';
export { workspaceFor } from './workspace';
