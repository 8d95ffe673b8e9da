import { connectAs, createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { inTx } from "@holdfast/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timersExplainDueFairly, timersFireDueFairly } from "../src/store/sql/timers";

/**
 * The fair due sweep at 1,000 organisations: one with a 50,000-timer backlog, 999 with 5 due timers each. Every
 * batch serves at most 20 organisations (least recently served first) and at most 50 timers of each, so the 999
 * small ones are all served, each once and completely, within 50 batches, while the big one drains 50 at a time;
 * and the statement the sweep runs is planned on the (org_id, due_at) index, never a sequential scan of timers.
 */
let t: TestDatabase;
const orgs = 1_000;
const small = 5;
const big = 50_000;
const [orgLimit, perOrg, total] = [20, 50, 500];

beforeAll(async () => {
  t = await createTestDatabase();
  // Rows are written in SQL for speed, as the schema's owner (ANALYZE is the owner's). Each organisation has its own
  // automation, version and runs (rows never point into another organisation).
  const owner = await connectAs(t.adminUrl, new URL(t.adminUrl).username);
  await owner.query(`
    INSERT INTO organisations (id, slug, name) SELECT 'org_' || lpad(g::text, 4, '0'), 'fair-' || g, 'Fair ' || g FROM generate_series(0, ${orgs - 1}) g;
    INSERT INTO automations (id, org_id, slug, name) SELECT 'aut_' || substr(id, 5), id, 'fair', 'fair' FROM organisations WHERE slug LIKE 'fair-%';
    INSERT INTO automation_versions (id, org_id, automation_id, version, graph)
      SELECT 'ver_' || substr(id, 5), id, 'aut_' || substr(id, 5), 1, '{}' FROM organisations WHERE slug LIKE 'fair-%';
    INSERT INTO runs (id, org_id, automation_id, version_id, start_key, input)
      SELECT 'run_' || substr(o.id, 5) || '_' || g, o.id, 'aut_' || substr(o.id, 5), 'ver_' || substr(o.id, 5), 'k' || g, '{}'
      FROM organisations o, generate_series(1, ${big}) g
      WHERE o.slug LIKE 'fair-%' AND (o.id = 'org_0000' OR g <= ${small});
    INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts, status)
      SELECT 'stp' || substr(id, 4), org_id, id, 'pause', 1, 'wait', 'human', 1, 'waiting' FROM runs WHERE automation_id LIKE 'aut_%';
    INSERT INTO timers (org_id, run_id, step_id, rule, zone, anchor_at, due_at)
      SELECT org_id, id, 'stp' || substr(id, 4), '{"kind":"duration","seconds":60}', 'UTC', now() - interval '2 minutes',
             now() - interval '1 minute' - (random() * interval '30 seconds')
      FROM runs WHERE automation_id LIKE 'aut_%';
    ANALYZE timers; ANALYZE organisations;`);
  await owner.end();
});
afterAll(async () => t?.drop());

const dueOf = async (where: string) =>
  (await t.sql.query(`SELECT count(*)::int AS n FROM timers WHERE fired_at IS NULL AND due_at <= now() AND ${where}`)).rows[0].n as number;

describe(`the fair due sweep at ${orgs} organisations`, () => {
  it("is planned on the (org_id, due_at) index: no sequential scan of timers", async () => {
    const plan = await inTx(t.db, (tx) => timersExplainDueFairly(tx, orgLimit, perOrg, total));
    expect(plan).toMatch(/timers_due_idx/);
    expect(plan).not.toMatch(/Seq Scan on timers/);
  });

  it(`serves all ${orgs - 1} small organisations, each once and completely, within ${Math.ceil(orgs / orgLimit)} batches while the big backlog drains`, async () => {
    expect(await dueOf("org_id <> 'org_0000'")).toBe((orgs - 1) * small);
    const servedIn = new Map<string, number[]>();
    const batches = Math.ceil(orgs / orgLimit);
    const started = performance.now();
    for (let b = 1; b <= batches; b++) {
      const batch = await inTx(t.db, (tx) => timersFireDueFairly(tx, orgLimit, perOrg, total, "test"));
      expect(batch.fired.length).toBeLessThanOrEqual(orgLimit);
      for (const f of batch.fired) {
        expect(f.count).toBe(f.orgId === "org_0000" ? perOrg : small);
        servedIn.set(f.orgId, [...(servedIn.get(f.orgId) ?? []), b]);
      }
    }
    const ms = performance.now() - started;
    // Every organisation with due work was served exactly once before any was served twice.
    expect(servedIn.size).toBe(orgs);
    expect([...servedIn.values()].filter((b) => b.length !== 1)).toEqual([]);
    expect(await dueOf("org_id <> 'org_0000'")).toBe(0);
    expect(await dueOf("org_id = 'org_0000'")).toBe(big - perOrg);
    // The next batch goes back to the backlog: it is the only organisation with due work left, so it gets the whole
    // batch (work-conserving), not perOrg of it.
    const next = await inTx(t.db, (tx) => timersFireDueFairly(tx, orgLimit, perOrg, total, "test"));
    expect(next.fired.map((f) => [f.orgId, f.count])).toEqual([["org_0000", total]]);
    console.log(`fair sweep, ${orgs} organisations: ${batches} batches served all ${(orgs - 1) * small + perOrg} timers of ${orgs} organisations in ${ms.toFixed(0)} ms (${(ms / batches).toFixed(1)} ms a batch)`);
  });

  it(`deals a batch round by round when the ${orgLimit} organisations picked hold more than it: each gets ${total / orgLimit}, not the first ${total / perOrg} by id ${perOrg} each`, async () => {
    // Nineteen small organisations get a backlog of 100 each beside the big one's: 20 x 50 candidates for 500 places.
    const owner = await connectAs(t.adminUrl, new URL(t.adminUrl).username);
    await owner.query(`
      INSERT INTO runs (id, org_id, automation_id, version_id, start_key, input)
        SELECT 'run_' || substr(o.id, 5) || '_more_' || g, o.id, 'aut_' || substr(o.id, 5), 'ver_' || substr(o.id, 5), 'more' || g, '{}'
        FROM organisations o, generate_series(1, 100) g WHERE o.id BETWEEN 'org_0001' AND 'org_0019';
      INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts, status)
        SELECT 'stp' || substr(id, 4), org_id, id, 'pause', 1, 'wait', 'human', 1, 'waiting' FROM runs WHERE start_key LIKE 'more%';
      INSERT INTO timers (org_id, run_id, step_id, rule, zone, anchor_at, due_at)
        SELECT org_id, id, 'stp' || substr(id, 4), '{"kind":"duration","seconds":60}', 'UTC', now() - interval '2 minutes', now() - interval '1 minute'
        FROM runs WHERE start_key LIKE 'more%';`);
    await owner.end();
    const batch = await inTx(t.db, (tx) => timersFireDueFairly(tx, orgLimit, perOrg, total, "test"));
    expect(batch.fired).toHaveLength(orgLimit);
    expect(new Set(batch.fired.map((f) => f.count))).toEqual(new Set([total / orgLimit]));
  });
});
