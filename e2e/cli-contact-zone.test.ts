import { GraphCache } from "@holdfast/core/versions";
import { advanceRun } from "@holdfast/core/run";
import { createTestDatabase, lineGraph, publish, runCli, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** `holdfast contacts set-zone`: the contact moved; its pending waits are recomputed in the new zone (issue 16, item 7). */
let t: TestDatabase;
let orgId = "";
let runId = "";
beforeAll(async () => {
  t = await createTestDatabase();
  const graph = lineGraph(
    { id: "form", kind: "trigger", config: { eventIdField: "id", contactEmailField: "email" } },
    { id: "monday", kind: "wait", config: { rule: { kind: "next_weekday", at: "09:00" }, zoneFrom: "input.tz", spreadSeconds: 0 } },
    { id: "done", kind: "end" },
  );
  orgId = (await publish(t.db, graph, { automation: "follow-up" })).orgId;
  await t.sql.query("INSERT INTO contacts (org_id, email, time_zone) VALUES ($1, 'lena@example.com', 'Europe/Berlin')", [orgId]);
  runId = await startTestRun(t.db, "follow-up", { id: "1", email: "lena@example.com" });
  await advanceRun(t.db, new GraphCache(), { orgId, runId, reason: "started" });
});
afterAll(async () => t?.drop());

const cli = (args: string[]) => runCli(t.url, args);

describe("holdfast contacts set-zone", () => {
  it("moves the contact's waiting run to the new zone, says so, and is harmless when repeated", async () => {
    const out = cli(["contacts", "set-zone", "acme", "Lena@Example.com", "Asia/Tokyo"]);
    expect(out.stderr).toBe("");
    expect(out.stdout.trim()).toBe("Lena@Example.com: time zone Europe/Berlin -> Asia/Tokyo; 1 pending waits recomputed");
    const { rows } = await t.sql.query("SELECT zone, due_at FROM timers WHERE run_id = $1", [runId]);
    expect(rows[0].zone).toBe("Asia/Tokyo");
    expect(new Intl.DateTimeFormat("en-GB", { timeZone: "Asia/Tokyo", hour: "2-digit", minute: "2-digit" }).format(rows[0].due_at)).toBe("09:00");
    expect(cli(["contacts", "set-zone", "acme", "lena@example.com", "Asia/Tokyo"]).stdout.trim()).toBe("lena@example.com already has that time zone");
    const bad = cli(["contacts", "set-zone", "acme", "lena@example.com", "Asia/Tokio"]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('"Asia/Tokio" is not a time zone');
    expect(cli(["contacts", "set-zone", "acme", "nobody@example.com", "UTC"]).stderr).toContain("no contact nobody@example.com");
  });
});
