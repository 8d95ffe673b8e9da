import { hostname } from "node:os";
import type { Db } from "@holdfast/db";
import type { Topic } from "../base/catalog";
import type { Logger } from "../base/log";
import { describeSlotFigures, isOutOfConnectionSlots, noSlotAtStartSentence } from "./ops/connection-slots";
import { isDatabaseUnreachable, type OutageReporter } from "./ops/outage";
import { outboxTakeDue } from "../store/sql/outbox";
import { sleep } from "../base/sleep";

export { sleep };

/** A worker identity that is unique per process and readable in the timeline. */
export function workerId(app: string): string {
  return `${app}@${hostname()}:${process.pid}`;
}

/** SIGTERM/SIGINT run `stop` once; a second signal exits at once. */
export function onShutdown(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, "shutting down");
    stop()
      .then(() => process.exit(0))
      .catch((error) => {
        log.error({ err: error }, "shutdown failed");
        process.exit(1);
      });
  };
  process.on("SIGTERM", handler);
  process.on("SIGINT", handler);
}

/**
 * The loop every background process shares: call `once` until stopped, pausing `idleMs` when it found nothing
 * (or `wake` resolves first) and backing off after errors. A lost connection goes to `outages` (which says so once
 * per outage, not once per iteration) and the loop goes on as soon as the service answers again.
 */
export async function loop(opts: {
  log: Logger;
  signal: AbortSignal;
  once: () => Promise<boolean>;
  idleMs: number;
  wake?: () => Promise<void>;
  outages?: OutageReporter;
}): Promise<void> {
  let failures = 0;
  while (!opts.signal.aborted) {
    try {
      const busy = await opts.once();
      failures = 0;
      if (!busy) {
        // One nap per idle pause, cancelled when a wake-up wins, so no timer or listener outlives its pause.
        const nap = new AbortController();
        const stop = () => nap.abort();
        opts.signal.addEventListener("abort", stop, { once: true });
        await Promise.race([sleep(opts.idleMs, nap.signal), opts.wake?.() ?? new Promise<void>(() => {})]);
        nap.abort();
        opts.signal.removeEventListener("abort", stop);
      }
    } catch (error) {
      failures++;
      const backoff = Math.min(30_000, 250 * 2 ** Math.min(failures, 7));
      if (opts.outages?.report(error)) {
        await sleep(250, opts.signal);
        await Promise.race([opts.outages.whenUp(), sleep(backoff, opts.signal)]);
        continue;
      }
      opts.log.error({ err: error, failures }, "loop iteration failed");
      await sleep(backoff, opts.signal);
    }
  }
}

/**
 * Runs one wake-up taken from the outbox (polling, or a lane's NOTIFY). A failure is the outage watch's when it is a
 * lost connection, else one line with the run and step: either way the step stays where it was and the sweeper
 * hands it on.
 */
export function handleWakeUp(
  opts: { handle: (payload: unknown) => Promise<unknown>; log: Logger; outages?: OutageReporter | undefined },
  payload: unknown,
): Promise<unknown> {
  return opts.handle(payload).catch((error) => {
    if (opts.outages?.report(error)) return;
    const { orgId, runId, stepId } = (payload ?? {}) as Record<string, unknown>;
    opts.log.error({ orgId, runId, stepId, err: error }, "wake-up handler failed; the sweeper will retry");
  });
}

/**
 * Consumes wake-ups by polling the outbox instead of Redis (WAKEUPS=poll): slower to react (up to `intervalMs`)
 * but needs nothing besides PostgreSQL. Never takes more rows than it has free slots.
 */
export function pollOutbox(opts: {
  db: Db;
  topic: Topic;
  lane: string | null;
  slots: number;
  intervalMs: number;
  log: Logger;
  signal: AbortSignal;
  handle: (payload: unknown) => Promise<unknown>;
  outages?: OutageReporter;
}): Promise<void> {
  let busy = 0;
  let freed: (() => void) | undefined;
  const inFlight = new Set<Promise<unknown>>();
  const done = loop({
    log: opts.log,
    signal: opts.signal,
    idleMs: opts.intervalMs,
    ...(opts.outages ? { outages: opts.outages } : {}),
    wake: () => new Promise<void>((resolve) => (freed = resolve)),
    once: async () => {
      const free = opts.slots - busy;
      if (free <= 0) return false;
      const rows = await outboxTakeDue(opts.db, opts.topic, opts.lane, free);
      for (const { payload } of rows) {
        busy++;
        const p = handleWakeUp(opts, payload).finally(() => {
          busy--;
          inFlight.delete(p);
          freed?.();
        });
        inFlight.add(p);
      }
      return rows.length === free;
    },
  });
  return done.then(async () => {
    await Promise.all(inFlight);
  });
}

/**
 * Start-up check every process runs: the secret key exists and is the database's. Exits with a readable message
 * (EX_CONFIG) otherwise, rather than starting and failing on the first secret it reads. A process started while the
 * database is unreachable (restarted by its supervisor in an outage) waits for it, saying so once, instead of exiting;
 * `onWaiting` is called when that wait begins (the web goes on serving 503s meanwhile, instrumentation.ts).
 */
export async function requireSecretKey(db: Db, log: Logger, retryMs = 1_000, onWaiting?: () => void): Promise<void> {
  const { checkSecretKey } = await import("../store/keys/key-check");
  let waitingSince: number | null = null;
  let noSlot = false;
  for (;;) {
    try {
      await checkSecretKey(db);
      if (waitingSince !== null) log.info({ service: "database", downForMs: Date.now() - waitingSince }, "database reachable: starting");
      if (noSlot) await saySlotFigures(db, log);
      return;
    } catch (error) {
      if (isDatabaseUnreachable(error)) {
        if (waitingSince === null) {
          waitingSince = Date.now();
          // Refused for want of a slot: one sentence that says so and what to do (no driver text, no stack).
          noSlot = isOutOfConnectionSlots(error);
          if (noSlot) log.error({ service: "database", reason: "too_many_clients" }, noSlotAtStartSentence);
          else log.warn({ service: "database", err: error }, "database not reachable at start-up: waiting for it");
          onWaiting?.();
        }
        await sleep(retryMs);
        continue;
      }
      if ((error as { code?: string }).code !== "secret_key") throw error;
      log.fatal((error as Error).message);
      process.stderr.write(`holdfast: ${(error as Error).message}\n`);
      process.exit(78);
    }
  }
}

/** After waiting for a connection slot: the server's budget and its use, so the operator can size the pools. */
async function saySlotFigures(db: Db, log: Logger): Promise<void> {
  const { databaseConnectionSlots } = await import("../store/sql/database");
  const figures = await databaseConnectionSlots(db).catch(() => null);
  if (figures) log.info({ service: "database", ...figures }, `got a connection slot: ${describeSlotFigures(figures)}`);
}
