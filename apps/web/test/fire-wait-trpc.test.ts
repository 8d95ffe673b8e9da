import { GraphCache, parseGraph } from "@holdfast/core/versions";
import { sessionUser, signIn, upsertMember } from "@holdfast/core/people";
import { advanceRun } from "@holdfast/core/run";
import { createTestDatabase, publish, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCallerFactory } from "../src/server/trpc/init";
import { appRouter } from "../src/server/trpc/router";

/** runs.fireWait: owners fire a real run's wait now; editors, approvers and viewers are refused in words. */
let t: TestDatabase;
let orgId = "";
let runId = "";
const createCaller = createCallerFactory(appRouter);
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;

async function callerFor(email: string) {
  const s = await signIn(t.db, email, "a long enough password");
  return createCaller({ db: t.db, user: await sessionUser(t.db, s?.token) });
}

beforeAll(async () => {
  t = await createTestDatabase();
  const graph = parseGraph({
    nodes: [
      { id: "start", kind: "trigger", config: { eventIdField: "id" } },
      { id: "nap", kind: "wait", config: { rule: { kind: "duration", seconds: 86_400 } } },
      { id: "call", kind: "http_request", config: { url: "http://127.0.0.1:9/x" } },
      { id: "done", kind: "end" },
    ],
    edges: [
      { from: "start", to: "nap" },
      { from: "nap", to: "call" },
      { from: "call", to: "done" },
    ],
  });
  orgId = (await publish(t.db, graph, { automation: "napper" })).orgId;
  for (const role of ["owner", "editor", "approver", "viewer"] as const) {
    await upsertMember(t.db, { orgId, email: `${role}@acme.test`, name: role, password: "a long enough password", role });
  }
  runId = await startTestRun(t.db, "napper", { id: "n-1" });
  await advanceRun(t.db, new GraphCache(), { orgId, runId, reason: "started" });
});
afterAll(async () => t?.drop());

describe("runs.fireWait", () => {
  it("refuses editors, approvers and viewers with FORBIDDEN in words, and a missing reason", async () => {
    for (const role of ["editor", "approver", "viewer"]) {
      const c = await callerFor(`${role}@acme.test`);
      await expect(c.runs.fireWait({ orgSlug: "acme", runId, reason: "please" }), role).rejects.toMatchObject({
        code: "FORBIDDEN",
        message: `Only owners can fire a wait early. You are ${role === "viewer" ? "a" : "an"} ${role}.`,
      });
    }
    const owner = await callerFor("owner@acme.test");
    await expect(owner.runs.fireWait({ orgSlug: "acme", runId, reason: "   " })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await q("SELECT fired_at FROM timers WHERE run_id = $1", [runId])).toEqual([{ fired_at: null }]);
  });

  it("an owner fires it: the next step is ready, the history names who and why; again reads back", async () => {
    const owner = await callerFor("owner@acme.test");
    const out = await owner.runs.fireWait({ orgSlug: "acme", runId, nodeId: "nap", reason: "the customer called" });
    expect(out).toMatchObject({ kind: "fired", nodeId: "nap", status: "running" });
    expect(out.words).toMatch(/^Fired: the wait at "nap" ended at .* UTC instead of .* UTC; the run goes on from here\.$/);
    expect(await q("SELECT node_id, status FROM steps WHERE run_id = $1 ORDER BY created_at", [runId])).toEqual([
      { node_id: "nap", status: "done" },
      { node_id: "call", status: "ready" },
    ]);
    expect(await q("SELECT action, by, reason FROM automation_history")).toEqual([{ action: "fire_wait", by: "user:owner@acme.test", reason: "the customer called" }]);
    const again = await owner.runs.fireWait({ orgSlug: "acme", runId, reason: "double click" });
    expect(again).toMatchObject({ kind: "already_fired", how: "early", firedBy: "user:owner@acme.test", reason: "the customer called" });
    expect(again.words).toContain('by owner@acme.test: "the customer called"');
  });
});
