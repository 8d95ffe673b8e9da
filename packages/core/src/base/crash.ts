import { z } from "zod";

/**
 * Named crash points. When HOLDFAST_CRASH_AT names one (comma-separated for several), the process kills itself
 * with SIGKILL on reaching it: no finally blocks, no flushed buffers, exactly like a power cut. Crash tests use
 * this to stop real processes at the worst lines. HOLDFAST_CRASH_SKIP=n lets the first n hits pass.
 */
export const crashEnv = z.object({
  HOLDFAST_CRASH_AT: z.string().optional().describe("Tests only: crash points (comma-separated) where the process kills itself with SIGKILL, e.g. relay.after_publish"),
  HOLDFAST_CRASH_SKIP: z.string().default("0").describe("Tests only: hits of the armed crash points let pass before the crash"),
  // Freezes the process there instead (SIGSTOP to itself) until a test sends SIGCONT: a worker held between two lines
  // for as long as the test needs, e.g. past its lease.
  HOLDFAST_PAUSE_AT: z.string().optional().describe("Tests only: points (comma-separated) where the process stops itself (SIGSTOP) until sent SIGCONT"),
  HOLDFAST_CRASH_DURING_MS: z.string().default("50").describe("Tests only: effect.during_call crashes this long after the provider call began (ms)"),
});
const crashSettings = crashEnv.parse(process.env);
const armed = new Set((crashSettings.HOLDFAST_CRASH_AT ?? "").split(",").filter(Boolean));
const paused = new Set((crashSettings.HOLDFAST_PAUSE_AT ?? "").split(",").filter(Boolean));
let skip = Number(crashSettings.HOLDFAST_CRASH_SKIP);

/** effect.during_call's delay after the provider call began (read when armed, as the test set it). */
export const crashDuringMs = (): number => Number(crashEnv.parse(process.env).HOLDFAST_CRASH_DURING_MS);

export const crashPoints = [
  "start.after_commit",
  "relay.after_publish",
  /** After a lane worker took step.ready rows from the outbox on a NOTIFY (marked sent, their steps claimed). */
  "worker.after_take",
  /** After a settle batch committed with first steps it took for the slots it freed (claimed), before they ran. */
  "worker.after_settle_take",
  "worker.after_claim",
  "worker.before_settle",
  /** While an effect's provider call is in flight (HOLDFAST_CRASH_DURING_MS after it began). */
  "effect.during_call",
  "engine.after_commit",
  /** Inside a signal's transaction, after it was stored (and consumed), before the commit. */
  "signal.before_commit",
  /** Inside an approval decision's transaction, after the decision, its signal and the step's settle, before the commit. */
  "approval.before_commit",
  /** After an approval's Slack message was posted, before its place was stored. */
  "notify.after_post",
  "sweeper.after_commit",
] as const;
export type CrashPoint = (typeof crashPoints)[number];

export function crashpoint(name: CrashPoint): void {
  if (paused.has(name)) {
    paused.delete(name);
    process.stderr.write(`pausepoint ${name}: SIGSTOP\n`);
    process.kill(process.pid, "SIGSTOP");
  }
  if (!armed.has(name)) return;
  if (skip > 0) {
    skip--;
    return;
  }
  process.stderr.write(`crashpoint ${name}: SIGKILL\n`);
  process.kill(process.pid, "SIGKILL");
}

/** Whether a crash point is armed in this process (so callers can avoid scheduling work for it otherwise). */
export const crashArmed = (name: CrashPoint): boolean => armed.has(name) || paused.has(name);
