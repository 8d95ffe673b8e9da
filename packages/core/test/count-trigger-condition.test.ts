import { createTestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, expect, it } from "vitest";

/**
 * The trigger steps_count_status fires when a step's journey count bucket changes. Its condition is written out
 * (20261214100000_count_status_when) rather than calling holdfast_count_bucket: here both are evaluated for every
 * pair of statuses steps_status_check allows, so the two cannot drift apart.
 */

let t: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t?.drop());

it("steps_count_status fires exactly when holdfast_count_bucket of the old and the new status differ", async () => {
  const [{ check, trigger }] = (
    await t.sql.query(`
      SELECT pg_get_constraintdef(c.oid) AS check,
             (SELECT pg_get_triggerdef(g.oid) FROM pg_trigger g WHERE g.tgrelid = 'steps'::regclass AND g.tgname = 'steps_count_status') AS trigger
      FROM pg_constraint c WHERE c.conrelid = 'steps'::regclass AND c.conname = 'steps_status_check'`)
  ).rows as [{ check: string; trigger: string }];
  const statuses = [...check.matchAll(/'([a-z_]+)'::text/g)].map((m) => m[1] as string);
  expect(statuses).toEqual(expect.arrayContaining(["ready", "running", "waiting", "parked", "done", "failed", "cancelled"]));
  const when = /WHEN \((.*)\) EXECUTE FUNCTION/s.exec(trigger)?.[1];
  expect(when, trigger).toBeTruthy();
  const condition = (when as string).replaceAll(/\bold\.status\b/gi, "a").replaceAll(/\bnew\.status\b/gi, "b");
  const { rows } = await t.sql.query(
    `SELECT a, b, COALESCE(${condition}, false) AS fires, holdfast_count_bucket(a) IS DISTINCT FROM holdfast_count_bucket(b) AS differs
     FROM unnest($1::text[]) a CROSS JOIN unnest($1::text[]) b`,
    [statuses],
  );
  expect(rows).toHaveLength(statuses.length ** 2);
  expect(rows.filter((r) => r.fires !== r.differs)).toEqual([]);
  // It does fire: ready -> done moves a run from "now" to "passed"; ready -> running (a claim) moves nothing.
  expect(rows.find((r) => r.a === "ready" && r.b === "done")?.fires).toBe(true);
  expect(rows.find((r) => r.a === "ready" && r.b === "running")?.fires).toBe(false);
});
