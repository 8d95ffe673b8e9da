import { type Db, inTx, type Tx } from "@holdfast/db";
import { z } from "zod";
import type { SystemMail } from "../../providers/connections/notices";
import type { Logger } from "../../base/log";
import type { EgressOptions } from "../../providers/net/egress";
import type { GraphCache } from "../../versions/graph-cache";

/**
 * One maintenance service of the sweeper: a `runOnce` that does one bounded batch and returns what it did, its own
 * settings, and the log line saying so. Most services are a `look` (their database part, in a transaction they are
 * given) and an `act` (what they do outside it: a login, an email, a repair per row); `runOnce` is then the look in a
 * transaction of its own followed by the act. The sweeper process runs the list under its leader lease
 * (run/sweeper/runner.ts), the looks of every service due in a tick in one transaction; tests call `runOnce` directly.
 */
export interface SweepService<R = unknown> {
  readonly name: string;
  /** How often the leader runs it (ms). */
  readonly intervalMs: number;
  /**
   * The loop it runs in: services of one loop run one after another; each loop runs beside the others (runner.ts).
   * Absent: "maintenance", shared by every housekeeping service. The due sweep has its own.
   */
  readonly loop?: string;
  runOnce(ctx: SweepContext): Promise<R>;
  /**
   * The same work split in two, when the service has a database part that fits in a transaction of the caller's:
   * `look` runs in `tx` (beside other services' looks: it must not reach outside the database, nor use `ctx.db`),
   * `act` after it commits, with what the look returned. Absent: only `runOnce`.
   */
  readonly split?: { look(tx: Tx, ctx: SweepContext): Promise<unknown>; act(ctx: SweepContext, looked: unknown): Promise<R> };
  /** The batch was full: more is waiting, so the loop runs it again after a short breath instead of the interval. */
  full(result: R): boolean;
  /**
   * When to run next (ms after this run started) if sooner than the interval: a service that found work and expects
   * more soon (the due sweep while timers keep coming due) says so; undefined: the interval.
   */
  nextInMs?(result: R): number | undefined;
  /** What it did, in the log (nothing when it did nothing). */
  report(result: R, log: Logger): void;
}

/** What a service works with; the process builds it once. */
export interface SweepContext {
  db: Db;
  /** The name the timeline and the rows the sweeper writes carry ("sweeper"). */
  actor: string;
  /** Compiled graphs (a missing timer is re-created from its node's rule). */
  graphs: GraphCache;
  /** The deployment's mailbox for owners' notices; null: notices are shown in the app only. */
  systemMail: SystemMail | null;
  egress?: EgressOptions;
}

export interface ServiceDefinition<S extends { intervalMs: number }, R> {
  readonly name: string;
  /** Its settings from the environment, validated; an unset variable falls back as the module says, then to its default. */
  readonly env: z.ZodType<S>;
  /** The service with its default settings, or with `settings` over them (tests, sweepOnce). */
  make(settings?: Partial<S>): SweepService<R> & { readonly settings: S };
}

/**
 * How a service does its work: `runOnce` alone (the due sweep, which runs its own transactions), or a `look` in a
 * transaction it is given and, when it has work outside the database, an `act` with what the look returned.
 */
type ServiceBody<S, R, L> =
  | { runOnce(ctx: SweepContext, settings: S): Promise<R>; look?: never; act?: never }
  | { look(tx: Tx, settings: S, ctx: SweepContext): Promise<L>; act(ctx: SweepContext, settings: S, looked: L): Promise<R>; runOnce?: never }
  | { look(tx: Tx, settings: S, ctx: SweepContext): Promise<R>; act?: never; runOnce?: never };

export function defineService<S extends { intervalMs: number }, R, L = R>(
  def: {
    name: string;
    env: z.ZodType<S>;
    loop?: string;
    full?(result: R, settings: S): boolean;
    nextInMs?(result: R, settings: S): number | undefined;
    report(result: R, log: Logger): void;
  } & ServiceBody<S, R, L>,
): ServiceDefinition<S, R> {
  return {
    name: def.name,
    env: def.env,
    make(overrides = {}) {
      const settings = { ...def.env.parse({}), ...overrides } as S;
      const split = splitOf(def, settings);
      return {
        name: def.name,
        settings,
        intervalMs: settings.intervalMs,
        ...(def.loop ? { loop: def.loop } : {}),
        ...(split ? { split } : {}),
        runOnce: split ? async (ctx) => split.act(ctx, await inTx(ctx.db, (tx) => split.look(tx, ctx))) : (ctx) => (def.runOnce as (c: SweepContext, s: S) => Promise<R>)(ctx, settings),
        full: (result) => def.full?.(result, settings) ?? false,
        nextInMs: (result) => def.nextInMs?.(result, settings),
        report: (result, log) => def.report(result, log),
      };
    },
  };
}

/** A body's look and act bound to its settings (a look without an act returns the result itself). */
function splitOf<S, R, L>(body: ServiceBody<S, R, L>, settings: S): SweepService<R>["split"] {
  if (!body.look) return undefined;
  const look = body.look as (tx: Tx, s: S, ctx: SweepContext) => Promise<unknown>;
  const act = body.act as ((ctx: SweepContext, s: S, looked: L) => Promise<R>) | undefined;
  return {
    look: (tx, ctx) => look(tx, settings, ctx),
    act: act ? (ctx, looked) => act(ctx, settings, looked as L) : async (_ctx, looked) => looked as R,
  };
}

/** The value types every service's settings use. */
export const setting = {
  intervalMs: z.coerce.number().int().min(50).max(86_400_000).describe("How often this service runs (ms); unset = SWEEP_INTERVAL_MS"),
  batch: z.coerce.number().int().min(1).max(100_000).describe("Rows per run; unset = from SWEEP_BATCH_SIZE"),
  /** A ready step or a quiet run older than this is assumed to have lost its wake-up. */
  staleSeconds: z.coerce.number().min(0.1).max(86_400).describe("Seconds quiet before a step or run counts as stalled; unset = SWEEP_STALE_SECONDS"),
};

/** Every service's default interval when neither its own variable nor SWEEP_INTERVAL_MS is set. */
export const defaultIntervalMs = 2_000;
/** Rows per batch when neither a service's own variable nor SWEEP_BATCH_SIZE is set. */
export const defaultBatch = 500;
/** Seconds before a quiet step or run counts as stalled when neither its own variable nor SWEEP_STALE_SECONDS is set. */
export const defaultStaleSeconds = 30;

/**
 * The sweeper-wide variables, the names the sweeper has always read: a service's own variable, when unset, falls
 * back to these, whose defaults are the constants above.
 */
export const sweepSharedEnv = z.object({
  SWEEP_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(600_000)
    .default(defaultIntervalMs)
    .describe("Every maintenance service's interval (ms) unless its own SWEEP_<SERVICE>_INTERVAL_MS is set"),
  SWEEP_BATCH_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(defaultBatch)
    .describe("Rows per run of the repairing services unless their own SWEEP_<SERVICE>_BATCH is set (the purges take 10 times it)"),
  SWEEP_STALE_SECONDS: setting.staleSeconds
    .default(defaultStaleSeconds)
    .describe("Seconds quiet before a step or run counts as stalled, unless a service's own _STALE_SECONDS is set"),
});

/** Step and run references for one log line per repaired run. */
export interface StepRef {
  orgId: string;
  runId: string;
  stepId: string;
}
export interface RunRef {
  orgId: string;
  runId: string;
}
