import { startRun } from "@holdfast/core/run";
import { parseGraph } from "@holdfast/core/versions";
import { createTestDatabase, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runsAt, runsAtFilters } from "../src/server/runs-at";

/**
 * The runs list's "at" filter (server/runs-at.ts) on a real database: the runs behind a step's "now" count, page after
 * page, each once, under the count the canvas shows; the same scan of steps says which runs they are. Another
 * organisation's member, a version that is not published and a made-up page marker find nothing of it.
 */
let t: TestDatabase;
let orgId = "";
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;

const graph = parseGraph({
  nodes: [
    { id: "signup", kind: "trigger", config: { eventIdField: "id" } },
    { id: "wait_a", kind: "wait", name: "Wait a day", config: { rule: { kind: "duration", seconds: 86_400 } } },
    { id: "done", kind: "end" },
  ],
  edges: [
    { from: "signup", to: "wait_a" },
    { from: "wait_a", to: "done" },
  ],
});

beforeAll(async () => {
  t = await createTestDatabase();
  ({ orgId } = await publish(t.db, graph, { automation: "welcome" }));
  for (let i = 1; i <= 7; i++) {
    const body = { id: `evt_${i}`, email: `lead${i}@example.com` };
    await startRun(t.db, {
      orgSlug: "acme",
      automationSlug: "welcome",
      rawBody: JSON.stringify(body),
      body,
      headers: { "webhook-id": `evt_${i}`, "webhook-timestamp": null, "webhook-signature": null },
      via: "test",
      auth: { kind: "operator" },
      delivery: { contentType: "application/json", bodyBytes: 2 },
    });
  }
});
afterAll(async () => t?.drop());

const acme = () => [{ orgId, orgSlug: "acme" }];
const filters = (extra: Record<string, string> = {}) => runsAtFilters.parse({ org: "acme", automation: "welcome", at: "wait_a", state: "now", window: "7d", ...extra });

describe("the runs behind a count", () => {
  it("lists every run at the step now, a page at a time, each once, under the step's count", async () => {
    const atStep = (await q("SELECT run_id FROM steps WHERE node_id = 'wait_a' AND status IN ('ready', 'running', 'waiting')")).map((r) => r.run_id as string);
    expect(atStep).toHaveLength(7);
    const listed: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await runsAt(t.db, acme(), filters(cursor ? { cursor } : {}), 3);
      if (!page) throw new Error("not found");
      expect(page).toMatchObject({ stepTitle: "Wait a day", count: 7, state: "now", restarted: false, automationName: "welcome" });
      expect(page.runs.length).toBeLessThanOrEqual(3);
      listed.push(...page.runs.map((r) => r.id));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect([...listed].sort()).toEqual([...atStep].sort());
    expect(new Set(listed).size).toBe(7);
    // Newest first: the list's order is the runs' start order, reversed.
    const started = (await q("SELECT id FROM runs ORDER BY created_at DESC, id DESC")).map((r) => r.id as string);
    expect(listed).toEqual(started);
  });

  it("finds nothing for another organisation's member, an unpublished version or a step with no runs there", async () => {
    expect(await runsAt(t.db, [{ orgId: "org_other", orgSlug: "other" }], filters())).toBeNull();
    expect(await runsAt(t.db, [{ orgId: "org_other", orgSlug: "acme-not" }], filters({ org: "acme-not" }))).toBeNull();
    expect(await runsAt(t.db, acme(), filters({ version: "9" }))).toBeNull();
    // A version past what a version number can be reads as none given (as "abc" does): all versions, not a database error.
    for (const version of ["2147483648", "99999999999999999999", "1e300"]) expect(await runsAt(t.db, acme(), filters({ version }))).toMatchObject({ version: null });
    const passed = await runsAt(t.db, acme(), filters({ state: "passed" }));
    expect(passed).toMatchObject({ count: 0, runs: [], nextCursor: null });
  });

  it("starts again from the newest when the page marker is not one it gave out", async () => {
    const page = await runsAt(t.db, acme(), filters({ cursor: "nonsense|run_x", state: "passed" }), 3);
    expect(page).toMatchObject({ restarted: true, count: 0 });
    // Shaped like a marker but no instant (month 13, hour 99): the same restart, never the database's error.
    for (const cursor of ["2026-13-45 99:99:99+00|run_x", "2026-02-30 10:00:00+00|run_x", "9999999-01-01 00:00:00+00|run_x"]) {
      expect(await runsAt(t.db, acme(), filters({ cursor, state: "failed" }), 3)).toMatchObject({ restarted: true, count: 0 });
    }
  });
});
