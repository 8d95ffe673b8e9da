import type { ConnectionLimits } from "./limits";

/**
 * Calls to a connection paused after repeated failures (its circuit breaker is open), in words for the people who
 * read the run page, Settings and the step's reason: what happened and when Holdfast tries again. The engine's names
 * ("breaker", "probe") stay in the code and under Details.
 */
export interface PausedCalls {
  connection: string;
  /** Failed calls that pause it: at least this many of `minCalls` calls within `windowMs` (from the limits). */
  failedCalls: number;
  minCalls: number;
  windowMs: number;
  /** When one call is tried again (the cool-down's end), when known. */
  retryAt?: Date | null;
}

const seconds = (ms: number) => {
  const s = Math.round(ms / 1000);
  return s >= 120 && s % 60 === 0 ? `${s / 60} minutes` : `${s} second${s === 1 ? "" : "s"}`;
};

export function pausedCallsOf(connection: string, limits: ConnectionLimits, retryAt: Date | null): PausedCalls {
  const { minCalls, failureRate, windowMs } = limits.breaker;
  return { connection, failedCalls: Math.max(1, Math.ceil(minCalls * failureRate)), minCalls, windowMs, retryAt };
}

/** "Calls to "CRM" are paused after 3 of 5 calls failed within 30 seconds; trying again at 16:05". */
export function pausedCallsWords(p: PausedCalls, when?: (at: Date) => string): string {
  const after =
    p.failedCalls >= p.minCalls
      ? `after ${p.failedCalls} failed call${p.failedCalls === 1 ? "" : "s"} in a row within ${seconds(p.windowMs)}`
      : `after ${p.failedCalls} of ${p.minCalls} calls failed within ${seconds(p.windowMs)}`;
  const again = p.retryAt && when ? `; trying again at ${when(p.retryAt)}` : "; Holdfast tries one call again shortly";
  return `Calls to "${p.connection}" are paused ${after}${again}`;
}
