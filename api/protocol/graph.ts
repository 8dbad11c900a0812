/** The graph Keel serves: one agent loop, with LangGraph's names for it and its nodes. */
export const graphId = 'agent';
export const agentNode = 'agent';
export const toolsNode = 'tools';
