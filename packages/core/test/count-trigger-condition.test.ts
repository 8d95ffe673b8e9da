import { createTestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, expect, it } from "vitest";

/**
 * The trigger steps_count_status (holdfast_count_steps_updated) counts a step whose journey count bucket changed. Its
 * condition is written out rather than calling holdfast_count_bucket twice a row: here both are evaluated for every
 * pair of statuses steps_status_check allows, so the two cannot drift apart.
 */

let t: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t?.drop());

it("steps_count_status counts a step exactly when holdfast_count_bucket of the old and the new status differ", async () => {
  const [{ check, trigger }] = (
    await t.sql.query(`
      SELECT pg_get_constraintdef(c.oid) AS check,
             (SELECT pg_get_functiondef(g.tgfoid) FROM pg_trigger g WHERE g.tgrelid = 'steps'::regclass AND g.tgname = 'steps_count_status') AS trigger
      FROM pg_constraint c WHERE c.conrelid = 'steps'::regclass AND c.conname = 'steps_status_check'`)
  ).rows as [{ check: string; trigger: string }];
  const statuses = [...check.matchAll(/'([a-z_]+)'::text/g)].map((m) => m[1] as string);
  expect(statuses).toEqual(expect.arrayContaining(["ready", "running", "waiting", "parked", "done", "failed", "cancelled"]));
  // A step's old and new status, paired (p.old_status, p.new_status).
  const where = /WHERE (p\..*?)\n\s*GROUP BY/s.exec(trigger)?.[1];
  expect(where, trigger).toBeTruthy();
  const condition = (where as string).replaceAll(/\bp\.old_status\b/g, "a").replaceAll(/\bp\.new_status\b/g, "b");
  expect(condition, "the condition reads only the two statuses").not.toMatch(/\bp\./);
  const { rows } = await t.sql.query(
    `SELECT a, b, COALESCE(${condition}, false) AS fires, holdfast_count_bucket(a) IS DISTINCT FROM holdfast_count_bucket(b) AS differs
     FROM unnest($1::text[]) a CROSS JOIN unnest($1::text[]) b`,
    [statuses],
  );
  expect(rows).toHaveLength(statuses.length ** 2);
  expect(rows.filter((r) => r.fires !== r.differs)).toEqual([]);
  // It does count: ready -> done moves a run from "now" to "passed"; ready -> running (a claim) moves nothing.
  expect(rows.find((r) => r.a === "ready" && r.b === "done")?.fires).toBe(true);
  expect(rows.find((r) => r.a === "ready" && r.b === "running")?.fires).toBe(false);
});
