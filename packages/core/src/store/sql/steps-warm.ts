import type { Sql } from "@holdfast/db";
import { stepsClaimIfLeaseFree, stepsHeartbeatIfToken, stepsTakeReady } from "./steps-claim";
import { stepsSettleManyIfToken } from "./steps-settle";

/**
 * Runs the hot path's named statements once on a new connection with arguments that match nothing (a take of no
 * rows, a claim and a heartbeat of no step, a batch of no settles), so each is parsed and planned, and its function
 * compiled, before a step needs it. Reads only: it changes no row.
 */
export async function stepsWarm(sql: Sql, lane: string, worker: string, leaseMs: number, effectKinds: readonly string[]): Promise<void> {
  await stepsTakeReady(sql, lane, 0, worker, leaseMs, effectKinds);
  await stepsClaimIfLeaseFree(sql, "", worker, leaseMs, effectKinds);
  await stepsHeartbeatIfToken(sql, "", 0, leaseMs);
  await stepsSettleManyIfToken(sql, []);
}
