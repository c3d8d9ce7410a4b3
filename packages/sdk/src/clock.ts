/**
 * The SDK's one read of the wall clock. Agent timestamps are informational (the coordinator's clock
 * decides leases, docs/design.md §3); runtime parts take `now` injected, with this as the default.
 */
export type Now = () => number;

export const systemNow: Now = () => Date.now();
