export interface FloorActivities {
  noop(): Promise<void>;
  /** A model call that returns at once what it was given (the floor conversation's turns). */
  model(payload: string): Promise<string>;
  /** A tool call, the same. */
  tool(payload: string): Promise<string>;
}

export const floorActivities: FloorActivities = {
  async noop() {},
  model: (payload) => Promise.resolve(payload),
  tool: (payload) => Promise.resolve(payload),
};
