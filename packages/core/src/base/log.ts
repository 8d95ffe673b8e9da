import { pino } from "pino";

export type Logger = pino.Logger;

/** Structured logs; lines about a run carry runId, stepId, attempt and orgId as fields (child loggers). */
export function createLogger(name: string, level = "info"): Logger {
  return pino({ name, level, base: { app: name, pid: process.pid } });
}
