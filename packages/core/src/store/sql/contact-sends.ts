import type { Db, Tx } from "@holdfast/db";

/**
 * contact_sends: the emails the frequency cap counts (people/sending-rules/frequency-cap-gate.ts), one row per effect
 * key. Every statement names the organisation; the address is stored lower-case (a CHECK holds it).
 */

/** One namespace of two-key advisory locks for the cap (the single-key form used elsewhere is another key space). */
const capLockSpace = 44;

/**
 * Takes the address's lock until the transaction ends. An advisory lock, not a row lock: the first send to an address
 * has no row to lock (the address need not even be a stored contact), and two sends racing for it must still queue.
 * A hash collision between two addresses only makes them take turns, never miscounts.
 */
export async function contactSendsLockAddress(tx: Tx, orgId: string, address: string): Promise<void> {
  await tx.$queryRaw`SELECT pg_advisory_xact_lock(${capLockSpace}::int, hashtext(${orgId} || ' ' || lower(${address})))::text`;
}

/** What the cap sees of one address, read under its lock. */
export interface ContactSendsWindow {
  /** This effect key's row for this address: counted (true), released (false), or none (null; a retry that now renders
   * another recipient is counted for that one). */
  thisKey: boolean | null;
  /** Unreleased sends of other effect keys to the address with sent_at in (now - period, now]. */
  count: number;
  /** The send whose leaving the window frees a place (the (count - cap + 1)th oldest), when count >= cap. */
  freeing: { sentAt: Date; automationName: string } | null;
  /** That send's sent_at + period: the next instant the cap allows. */
  allowedAt: Date | null;
  /** The database's clock for this read; a counted send is written with it. */
  now: Date;
}

/**
 * The window of one address. statement_timestamp(), not now(): this runs after waiting for the lock, and now() (the
 * transaction's start) could be earlier than the sent_at the lock's previous holder just wrote, hiding its send.
 */
export async function contactSendsWindow(tx: Tx, q: { orgId: string; address: string; effectKey: string; cap: number; periodHours: number }): Promise<ContactSendsWindow> {
  const rows = await tx.$queryRaw<ContactSendsWindow[]>`
    WITH clock AS (SELECT statement_timestamp() AS now, make_interval(hours => ${q.periodHours}::int) AS period),
    w AS (
      SELECT cs.sent_at, cs.automation_id FROM contact_sends cs, clock
      WHERE cs.org_id = ${q.orgId} AND cs.address = lower(${q.address}) AND cs.released_at IS NULL AND cs.effect_key <> ${q.effectKey}
        AND cs.sent_at > clock.now - clock.period AND cs.sent_at <= clock.now
    ),
    n AS (SELECT count(*)::int AS count FROM w),
    f AS (SELECT w.sent_at, w.automation_id FROM w ORDER BY w.sent_at OFFSET greatest((SELECT count FROM n) - ${q.cap}::int, 0) LIMIT 1)
    SELECT (SELECT released_at IS NULL FROM contact_sends WHERE org_id = ${q.orgId} AND effect_key = ${q.effectKey} AND address = lower(${q.address})) AS "thisKey",
           n.count, f.sent_at AS "sentAt", a.name AS "automationName", f.sent_at + clock.period AS "allowedAt", clock.now
    FROM clock CROSS JOIN n LEFT JOIN f ON n.count >= ${q.cap}::int
    LEFT JOIN automations a ON a.org_id = ${q.orgId} AND a.id = f.automation_id`;
  const r = rows[0] as ContactSendsWindow & { sentAt: Date | null; automationName: string | null };
  return {
    thisKey: r.thisKey,
    count: r.count,
    freeing: r.sentAt ? { sentAt: r.sentAt, automationName: r.automationName ?? "a deleted automation" } : null,
    allowedAt: r.sentAt ? r.allowedAt : null,
    now: r.now,
  };
}

/** Counts this send (or counts it again, after it was released): written at the instant the window was read. */
export async function contactSendsCount(
  tx: Tx,
  s: { orgId: string; address: string; effectKey: string; automationId: string; runId: string; stepId: string; at: Date },
): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO contact_sends (org_id, address, effect_key, automation_id, run_id, step_id, sent_at)
    VALUES (${s.orgId}, lower(${s.address}), ${s.effectKey}, ${s.automationId}, ${s.runId}, ${s.stepId}, ${s.at})
    ON CONFLICT (org_id, effect_key) DO UPDATE
      SET released_at = NULL, sent_at = EXCLUDED.sent_at, address = EXCLUDED.address, run_id = EXCLUDED.run_id, step_id = EXCLUDED.step_id`;
}

/** The send definitely did not go out (refused before DATA): it no longer counts. */
export async function contactSendsRelease(tx: Db | Tx, orgId: string, effectKey: string): Promise<number> {
  return tx.$executeRaw`UPDATE contact_sends SET released_at = now() WHERE org_id = ${orgId} AND effect_key = ${effectKey} AND released_at IS NULL`;
}

/** Erasing a contact: what the cap knew of the address goes with it. */
export async function contactSendsEraseAddress(tx: Tx, orgId: string, address: string): Promise<number> {
  return tx.$executeRaw`DELETE FROM contact_sends WHERE org_id = ${orgId} AND address = lower(${address})`;
}
