import type { ListenClient } from "@holdfast/db";
import { crashpoint } from "../../base/crash";
import type { Logger } from "../../base/log";
import { listenChannels } from "../ops/listen";
import type { OutageReporter } from "../ops/outage";
import { readyChannel } from "../../store/sql/outbox";
import type { ClaimedStep } from "../../store/sql/steps";
import { ReadyDemand } from "./ready-demand";
import type { Slots } from "./slots";

/**
 * First-step dispatch without the relay hop: a lane worker LISTENs on its lane's channel (the outbox trigger
 * notifies it when a due step.ready row is inserted) and, while it has free slots, takes those rows straight from
 * the outbox and claims their steps in the same statement (`take`: store/sql/steps-claim.ts stepsTakeReady; SKIP LOCKED, marked
 * sent as taken, so the relay never publishes them too). A row no worker takes (all busy, a lost notification, no
 * worker listening) is the relay's after its grace (`RELAY_STEP_READY_GRACE_MS`), as before. Work is looked for on a
 * notification, when a slot frees after one came while all were busy, and after every (re)subscription.
 * Starters with a Redis connection announce first steps on Redis instead of NOTIFY (queue/wake.ts): `bus` subscribes
 * to those announcements and answers them the same way; the LISTEN stays for every other writer of step.ready rows.
 * Whether a look is owed is `demand`'s, shared with the worker's settle batches: a batch whose settles free slots
 * takes for them in its own commit while a look is owed (run/steps/settle-batch.ts), and this take runs only when a slot
 * is free with a look still owed.
 */
export interface ReadyListenerOptions {
  /**
   * Takes up to `limit` due step.ready rows of the lane and claims their steps (how many rows, which steps, and
   * whether it saw more due after taking `limit`).
   */
  take: (limit: number) => Promise<{ taken: number; claimed: ClaimedStep[]; more: boolean }>;
  connect: () => ListenClient;
  lane: string;
  slots: Slots;
  /** Whether a look is owed (shared with the runner's settle batches); the listener's own when absent. */
  demand?: ReadyDemand;
  log: Logger;
  outages?: OutageReporter;
  /** Runs a claimed step (and what it chains into) to its settle. */
  run: (step: ClaimedStep) => Promise<unknown>;
  /** Subscribes to the lane's announcements on Redis; `onWake` after every message and (re)subscription. */
  bus?: (onWake: () => void) => { close(): Promise<void> };
}

export function takeReadySteps(opts: ReadyListenerOptions): { close(): Promise<void>; taken(): number } {
  const demand = opts.demand ?? new ReadyDemand(opts.slots);
  let pumping = false;
  let closed = false;
  let taken = 0;
  const inFlight = new Set<Promise<unknown>>();

  let pumped: Promise<void> = Promise.resolve();
  const pump = (): Promise<void> => {
    if (pumping || closed) return pumped;
    pumping = true;
    pumped = pumpOnce();
    return pumped;
  };
  const pumpOnce = async (): Promise<void> => {
    try {
      while (demand.isOwed && !closed) {
        const rows = await takeForFreeSlots(opts, demand);
        if (rows === null) return;
        taken += rows.length;
        for (const step of rows) runOnItsSlot(opts, inFlight, step);
      }
    } finally {
      pumping = false;
    }
  };

  const wanted = () => {
    demand.notified();
    void pump();
  };
  const unsubscribe = opts.slots.onFreed(() => {
    if (demand.isOwed) void pump();
  });
  const listener = listenChannels({
    connect: opts.connect,
    channels: [readyChannel(opts.lane)],
    onNotify: wanted,
    onListening: wanted,
    log: opts.log,
    ...(opts.outages ? { outages: opts.outages } : {}),
  });

  const bus = opts.bus?.(wanted);

  return {
    taken: () => taken,
    async close() {
      closed = true;
      unsubscribe();
      await Promise.all([listener.close(), bus?.close()]);
      // A take still on its way may come back with claimed steps: they run to their settles before close returns.
      await pumped;
      await Promise.all(inFlight);
    },
  };
}

/**
 * One take for every free slot: the steps it claimed keep their slots, the other slots are given back. Null when no
 * slot was free (a freed slot calls again while a look is owed) or the take failed (the next notification,
 * resubscription or freed slot tries again; the relay is the backstop).
 */
async function takeForFreeSlots(opts: ReadyListenerOptions, demand: ReadyDemand): Promise<ClaimedStep[] | null> {
  let held = 0;
  while (opts.slots.tryAcquire()) held++;
  if (held === 0) return null;
  const mark = demand.mark();
  let rows: ClaimedStep[];
  let rowsTaken: number;
  let more: boolean;
  try {
    ({ taken: rowsTaken, claimed: rows, more } = await opts.take(held));
  } catch (error) {
    for (let i = 0; i < held; i++) opts.slots.release();
    demand.failed();
    if (!opts.outages?.report(error)) opts.log.error({ err: error }, "taking ready steps from the outbox failed; the relay will deliver them");
    return null;
  }
  // Taken rows are marked sent and their steps claimed by this worker: a death from here leaves them running
  // under leases that lapse, and the sweeper hands them on (step.lease_expired), as after any claim.
  if (rows.length > 0) crashpoint("worker.after_take");
  for (let i = rows.length; i < held; i++) opts.slots.release();
  // Every slot filled and more due: take again as slots free. (Not after a take that filled fewer: rows it
  // skipped are another take's, and looking again at once would spin until that one commits.) A notification
  // that came while the take was on its way is owed still.
  demand.answered(mark, rowsTaken === held && more);
  return rows;
}

/** Runs a claimed step to its settle on the slot its take held, and frees the slot when it is done either way. */
function runOnItsSlot(opts: ReadyListenerOptions, inFlight: Set<Promise<unknown>>, step: ClaimedStep): void {
  const p = opts
    .run(step)
    .catch((error) => {
      if (opts.outages?.report(error)) return;
      opts.log.error({ orgId: step.orgId, runId: step.runId, stepId: step.id, err: error }, "step failed before its settle; its lease lapses and the sweeper hands it on");
    })
    .finally(() => {
      inFlight.delete(p);
      opts.slots.release();
    });
  inFlight.add(p);
}
