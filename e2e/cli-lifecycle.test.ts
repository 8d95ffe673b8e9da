import { createTestDatabase, lineGraph, publish, runCli, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** The lifecycle, Stop all runs, retry and rerun through `pnpm holdfast` (the real CLI process against this file's database). */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  const nap = { id: "nap", kind: "wait", config: { rule: { kind: "duration", seconds: 86_400 } } };
  await publish(t.db, lineGraph({ id: "start", kind: "trigger", config: { eventIdField: "id" } }, nap, { id: "done", kind: "end" }), { automation: "orders" });
});
afterAll(async () => t?.drop());

const cli = (args: string[]) => runCli(t.url, args);
const q = async (sql: string, params: unknown[] = []) => (await t.sql.query(sql, params)).rows;
const status = async () => (await q("SELECT status, pause_mode, pause_runs FROM automations WHERE slug = 'orders'"))[0];

describe("pnpm holdfast automations pause|resume|archive|restore|stop-runs, runs retry|rerun|fire-wait", () => {
  it("pauses with both holds, resumes, archives and restores, each on the history", async () => {
    const runId = await startTestRun(t.db, "orders", { id: "o-1" });
    const paused = cli(["automations", "pause", "acme", "orders", "--hold-deliveries", "--hold-runs", "--reason", "vendor outage"]);
    expect(paused.status, paused.stderr).toBe(0);
    expect(paused.stdout).toContain("Paused: new deliveries are accepted and their runs wait before their first step; running runs wait before their next step.");
    expect(paused.stdout).toContain("1 running run(s) held");
    expect(await status()).toEqual({ status: "paused", pause_mode: "hold", pause_runs: "hold" });
    expect(await q("SELECT held_at IS NOT NULL AS held FROM runs WHERE id = $1", [runId])).toEqual([{ held: true }]);
    expect(cli(["automations", "pause", "acme", "orders", "--hold-deliveries", "--hold-runs"]).stdout).toContain("unchanged");
    const refused = cli(["automations", "restore", "acme", "orders"]);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("resume it instead");
    expect(cli(["automations", "resume", "acme", "orders"]).stdout).toContain("1 held run(s) released");
    expect(cli(["automations", "archive", "acme", "orders"]).status).toBe(0);
    expect((await status()).status).toBe("archived");
    expect(cli(["automations", "restore", "acme", "orders"]).stdout).toContain("Active");
    expect((await q("SELECT action, by FROM automation_history ORDER BY seq")).map((r) => r.action)).toEqual(["pause", "resume", "archive", "restore"]);
    expect((await q("SELECT reason FROM automation_history WHERE action = 'pause'"))[0]).toEqual({ reason: "vendor outage" });
  });

  it("stop-runs counts first and cancels only with --yes; runs rerun links a new run; runs retry refuses a run that did not fail", async () => {
    const second = await startTestRun(t.db, "orders", { id: "o-2" });
    const counted = cli(["automations", "stop-runs", "acme", "orders", "--reason", "duplicates"]);
    expect(counted.stdout).toContain("2 run(s) of acme/orders are running and would be cancelled. Run again with --yes");
    expect((await q("SELECT count(*)::int AS n FROM runs WHERE status = 'running'"))[0].n).toBe(2);
    expect(cli(["automations", "stop-runs", "acme", "orders"]).status).not.toBe(0); // a reason is required
    const stopped = cli(["automations", "stop-runs", "acme", "orders", "--version", "1", "--reason", "duplicates", "--yes"]);
    expect(stopped.stdout).toContain("acme/orders version 1: 2 cancelled, 0 stop when their outside call settles");
    expect((await q("SELECT count(*)::int AS n FROM runs WHERE status = 'cancelled' AND cancel_reason = 'duplicates'"))[0].n).toBe(2);

    const retry = cli(["runs", "retry", "acme", second]);
    expect(retry.status).not.toBe(0);
    expect(retry.stderr).toContain("only a failed run can be retried; this one is cancelled");
    const rerun = cli(["runs", "rerun", "acme", second]);
    expect(rerun.status, rerun.stderr).toBe(0);
    const newRunId = /ran again as (run_[0-9a-f]{32})/.exec(rerun.stdout)?.[1];
    expect(await q("SELECT rerun_of, status FROM runs WHERE id = $1", [newRunId])).toEqual([{ rerun_of: second, status: "running" }]);
  });

  it("runs fire-wait ends a run's wait now, once; a repeat prints what happened; a stopped run's wait is refused (exit 65)", async () => {
    const runId = await startTestRun(t.db, "orders", { id: "o-fire" });
    expect(await q("SELECT node_id, status FROM steps WHERE run_id = $1", [runId])).toEqual([{ node_id: "nap", status: "waiting" }]);
    expect(cli(["runs", "fire-wait", runId]).status).toBe(64); // a reason is required
    const fired = cli(["runs", "fire-wait", runId, "--step", "nap", "--reason", "the customer asked"]);
    expect(fired.status, fired.stderr).toBe(0);
    expect(fired.stdout).toMatch(new RegExp(`^${runId}: Fired: the wait at "nap" ended at .* UTC instead of .* UTC; the run is completed\\.\n$`));
    expect(await q("SELECT status FROM runs WHERE id = $1", [runId])).toEqual([{ status: "completed" }]);
    const again = cli(["runs", "fire-wait", runId, "--reason", "again"]);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/Already fired at .* UTC by .* \(CLI\): "the customer asked" \(it was due .* UTC\)\. Nothing was done again\./);
    const history = await q("SELECT by, reason, detail->>'nodeId' AS node FROM automation_history WHERE action = 'fire_wait'");
    expect(history).toEqual([{ by: expect.stringMatching(/^cli:/), reason: "the customer asked", node: "nap" }]);

    const cancelled = await startTestRun(t.db, "orders", { id: "o-fire-2" });
    expect(cli(["runs", "cancel", cancelled]).status).toBe(0);
    const refused = cli(["runs", "fire-wait", cancelled, "--reason", "too late"]);
    expect(refused.status).toBe(65);
    expect(refused.stderr).toContain(`holdfast: ${cancelled}: not fired: the wait at "nap" was closed when the run stopped`);
  });
});
