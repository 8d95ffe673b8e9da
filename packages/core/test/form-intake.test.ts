import { createTestDatabase, publish, startOnlyGraph, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRun } from "../src/run/start/start-run";

/**
 * Form intake: a URL-token trigger keys a post without webhook-id or id by its content, and the database decides
 * whether an identical one is within the window of the first run with that content.
 */
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  await publish(t.db, startOnlyGraph({ eventIdField: "id" }), { automation: "leads", triggerAuth: "url_token" });
  await publish(t.db, startOnlyGraph({ eventIdField: "id", duplicateWindowHours: 0 }), { automation: "every", triggerAuth: "url_token" });
});
afterAll(async () => {
  await t?.drop();
});

const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;

function submit(automation: string, body: Record<string, unknown>) {
  return startRun(t.db, {
    orgSlug: "acme",
    automationSlug: automation,
    rawBody: JSON.stringify(body),
    body,
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
}

describe("identical submissions", () => {
  it("are one run within the window and a new one after it, as the database clock says", async () => {
    const form = { email: "maya@example.com", name: "Maya", marker: "window" };
    const first = await submit("leads", form);
    expect(first.duplicate).toBe(false);
    const again = await submit("leads", { name: "Maya", marker: "window", email: "maya@example.com" });
    expect(again).toMatchObject({ runId: first.runId, duplicate: true });

    // The first run started 25 hours ago: the window (24 hours) is over, so the next identical one is a new run.
    await rows("UPDATE runs SET created_at = created_at - interval '25 hours' WHERE id = $1", [first.runId]);
    const later = await submit("leads", form);
    expect(later.duplicate).toBe(false);
    expect(later.runId).not.toBe(first.runId);
    const latest = await submit("leads", form);
    expect(latest).toMatchObject({ runId: later.runId, duplicate: true });
    const keys = await rows("SELECT start_key FROM runs WHERE id = ANY($1::text[]) ORDER BY created_at", [[first.runId, later.runId]]);
    expect(keys[1].start_key).toBe(`${keys[0].start_key}:2`);
  });

  it("start exactly one run when sent at the same moment", async () => {
    const form = { email: "max@example.com", name: "Max", marker: "race" };
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => submit("leads", form)));
    expect(new Set(outcomes.map((o) => o.runId)).size).toBe(1);
    expect(outcomes.filter((o) => !o.duplicate)).toHaveLength(1);
  });

  it("each start a run with window 0, and an id field still names the submission", async () => {
    const form = { email: "ana@example.com", marker: "zero" };
    const a = await submit("every", form);
    const b = await submit("every", form);
    expect(a.duplicate || b.duplicate).toBe(false);
    expect(a.runId).not.toBe(b.runId);
    const withId = await submit("every", { ...form, id: "sub_1" });
    expect(await submit("every", { ...form, id: "sub_1" })).toMatchObject({ runId: withId.runId, duplicate: true });
  });
});
