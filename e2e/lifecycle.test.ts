import { triggerSettings } from "@holdfast/core/versions";
import {
  addMember,
  type HttpTarget,
  lineGraph,
  productProcesses,
  publish,
  screenshots,
  signedInPage,
  startHttpTarget,
  startTestDeployment,
  startTestRun,
  type TestDeployment,
  waitFor,
} from "@holdfast/testkit";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Sam runs an automation (issue 16, items 1 and 2) through the built web app with the real relay, engine and lane
 * worker: pauses it from the list (a delivery gets 503 with Retry-After and writes nothing but its log line),
 * resumes it (the same delivery is accepted), stops all its runs from the editor bar (the count first, a reason,
 * then a confirm), and retries a failed run from its failed step on the run page (the call goes out again with the
 * same Idempotency-Key and the run completes). Screenshots: e2e/artifacts/lifecycle-*.png.
 */
let d: TestDeployment;
let target: HttpTarget;
let page: Page;
const ids: Record<string, string> = {};
let token = "";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const shots = screenshots("lifecycle");
const shot = (name: string) => shots(page, name);

beforeAll(async () => {
  d = await startTestDeployment();
  target = d.closeAtStop(await startHttpTarget());
  const orders = await publish(
    d.t.db,
    lineGraph({ id: "start", kind: "trigger", config: { eventIdField: "id" } }, { id: "cool_off", kind: "wait", config: { rule: { kind: "duration", seconds: 86_400 } } }, { id: "done", kind: "end" }),
    { automation: "orders", triggerAuth: "url_token" },
  );
  ids.org = orders.orgId;
  ids.orders = orders.automationId;
  const fragile = lineGraph({ id: "start", kind: "trigger", config: { eventIdField: "id" } }, { id: "update_crm", kind: "http_request", config: { url: target.url, maxAttempts: 1 } }, { id: "done", kind: "end" });
  ids.fragile = (await publish(d.t.db, fragile, { automation: "fragile" })).automationId;
  token = (await triggerSettings(d.t.db, ids.org, ids.orders, "url_token")).urlToken;
  await addMember(d.t.db, ids.org, "sam@acme.test", "Sam", "editor");
  const web = await d.startWeb();
  await d.startApps(productProcesses({ io: { LANE_LEASE_MS: "3000" } }, { sweeper: false }));
  page = await signedInPage(await d.launchBrowser(), web.base, "sam@acme.test", { viewport: { width: 1400, height: 1000 } });
});

afterAll(async () => d?.stop());

const deliver = (id: string) =>
  fetch(`${d.web.base}/api/hooks/acme/orders/${token}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id }) });
const counts = async () =>
  (
    await q(
      `SELECT (SELECT count(*) FROM runs)::int AS runs, (SELECT count(*) FROM run_events)::int AS events, (SELECT count(*) FROM steps)::int AS steps,
              (SELECT count(*) FROM outbox)::int AS outbox, (SELECT count(*) FROM trigger_deliveries)::int AS deliveries`,
    )
  )[0] as Record<string, number>;

describe("automation lifecycle in the browser", () => {
  it("pause from the list: a delivery gets 503 with Retry-After and only its log line; resume: the same delivery is accepted", async () => {
    await page.goto(`${d.web.base}/automations?org=acme`);
    const row = page.locator('tr[data-automation="orders"]');
    await expect(row.locator("[data-lifecycle]").textContent()).resolves.toBe("Active");
    await row.getByRole("button", { name: "Pause" }).click();
    await page.waitForSelector("text=orders: paused");
    await expect.poll(() => row.locator("[data-lifecycle]").textContent()).toBe("Paused");
    await shot("list-paused");

    const before = await counts();
    const refused = await deliver("order-1");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("300");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("automation_paused");
    expect(await counts()).toEqual({ ...before, deliveries: (before.deliveries ?? 0) + 1 });
    expect(await q("SELECT outcome, status, reason FROM trigger_deliveries ORDER BY seq DESC LIMIT 1")).toEqual([
      { outcome: "refused", status: 503, reason: "automation is paused: refused with Retry-After, the sender should send it again later" },
    ]);

    await row.getByRole("button", { name: "Resume" }).click();
    await expect.poll(() => row.locator("[data-lifecycle]").textContent()).toBe("Active");
    const accepted = await deliver("order-1"); // the sender's retry
    expect(accepted.status).toBe(202);
    const { runId } = (await accepted.json()) as { runId: string };
    await waitFor(async () => (await q("SELECT 1 FROM steps WHERE run_id = $1 AND node_id = 'cool_off' AND status = 'waiting'", [runId])).length > 0, 30_000, "the run to wait");
    await shot("list-resumed");
  });

  it("stop all runs from the editor bar: the count, a reason, a confirm; each run cancelled with the reason; the history lists it all", async () => {
    await startTestRun(d.t.db, "orders", { id: "order-2" });
    await startTestRun(d.t.db, "orders", { id: "order-3" });
    await waitFor(async () => (await q("SELECT count(*)::int AS n FROM steps s JOIN runs r ON r.id = s.run_id WHERE r.automation_id = $1 AND s.status = 'waiting'", [ids.orders]))[0].n === 3, 30_000, "three waiting runs");
    await page.goto(`${d.web.base}/automations/${ids.orders}?org=acme`);
    await page.getByRole("button", { name: "Stop all runs…" }).click();
    await expect.poll(() => page.locator("[data-stop-count]").textContent()).toBe("3 runs are running and would be cancelled.");
    const stopButton = page.getByRole("button", { name: "Stop 3 runs" });
    expect(await stopButton.isDisabled()).toBe(true); // no reason yet
    await page.getByLabel("Reason (kept on each run's timeline)").fill("orders imported twice");
    await shot("stop-count");
    await stopButton.click();
    await page.waitForSelector("text=Stopped: 3 cancelled.");
    expect(await q("SELECT status, cancel_reason FROM runs WHERE automation_id = $1", [ids.orders])).toEqual(
      Array.from({ length: 3 }, () => ({ status: "cancelled", cancel_reason: "orders imported twice" })),
    );
    await page.locator("summary", { hasText: "History" }).click();
    const history = page.locator("tr[data-history]");
    await expect.poll(() => history.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-history")))).toEqual(["stop_runs", "resume", "pause"]);
    expect(await history.first().textContent()).toContain("sam@acme.test");
    await shot("stopped-history");
  });

  it("pause from the editor bar with deliveries held: accepted, held before its first step; Resume wakes it through the engine", async () => {
    await page.goto(`${d.web.base}/automations/${ids.orders}?org=acme`);
    await page.getByRole("button", { name: "Pause…" }).click();
    await page.getByLabel(/Accept and hold them/).check();
    await page.getByLabel(/Hold each before its next step/).check();
    await shot("pause-choices");
    await page.getByRole("button", { name: "Pause", exact: true }).click();
    await page.waitForSelector("text=Paused.");
    await expect.poll(() => page.locator("[data-lifecycle-words]").textContent()).toContain("new deliveries are accepted and their runs wait before their first step");
    const held = await deliver("order-held");
    expect(held.status).toBe(202);
    const { runId } = (await held.json()) as { runId: string };
    expect(await q("SELECT held_at IS NOT NULL AS held FROM runs WHERE id = $1", [runId])).toEqual([{ held: true }]);
    await new Promise((r) => setTimeout(r, 1_000)); // the engine and relay are running: still nothing scheduled
    expect(await q("SELECT count(*)::int AS n FROM steps WHERE run_id = $1", [runId])).toEqual([{ n: 0 }]);
    await page.getByRole("button", { name: "Resume" }).click();
    await page.waitForSelector("text=Resumed. 1 held run released.");
    await waitFor(async () => (await q("SELECT 1 FROM steps WHERE run_id = $1 AND node_id = 'cool_off' AND status = 'waiting'", [runId])).length > 0, 30_000, "the released run's first step");
    expect((await q("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", [runId])).map((r) => r.type)).toEqual(
      expect.arrayContaining(["run.started", "run.held", "run.released", "timer.scheduled"]),
    );
    await shot("resumed-held");
  });

  it("a failed run is retried from its failed step on the run page: the same Idempotency-Key, the run completes", async () => {
    target.behave({ failFirst: 1, failStatus: 422 });
    const runId = await startTestRun(d.t.db, "fragile", { id: "lead-1" });
    await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status === "failed", 30_000, "the run to fail");
    await page.goto(`${d.web.base}/runs/${runId}`);
    await shot("run-failed");
    await page.getByRole("button", { name: "Retry from the failed step" }).click();
    await page.waitForSelector("text=Retrying from step update_crm");
    await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status === "completed", 30_000, "the retried run to complete");
    expect(target.calls.get(`${runId}/update_crm/1`)).toBe(2);
    const types = (await q("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", [runId])).map((r) => r.type);
    expect(types.indexOf("run.failed")).toBeLessThan(types.indexOf("run.retried"));
    expect(types.at(-1)).toBe("run.completed");
    await page.goto(`${d.web.base}/runs/${runId}`);
    await shot("run-retried");

    // Run again with the same input: a new run linked to this one.
    await page.getByRole("button", { name: "Run again with the same input" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/runs/") && !url.pathname.endsWith(runId));
    const newRunId = page.url().split("/runs/")[1]?.split("?")[0] ?? "";
    expect(await q("SELECT rerun_of FROM runs WHERE id = $1", [newRunId])).toEqual([{ rerun_of: runId }]);
    await expect(page.locator("[data-rerun-of]").getAttribute("data-rerun-of")).resolves.toBe(runId);
    await shot("rerun");
  });
});
