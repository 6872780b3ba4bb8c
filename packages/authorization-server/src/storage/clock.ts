/** Milliseconds since the epoch; replaceable so tests can move time without sleeping. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

export function epochSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
