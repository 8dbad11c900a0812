export interface FloorActivities {
  noop(): Promise<void>;
}

export const floorActivities: FloorActivities = {
  async noop() {},
};
