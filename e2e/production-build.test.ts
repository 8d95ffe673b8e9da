import { type AppName, ensureAppsBuilt, type HttpTarget, httpChainGraph, publish, startHttpTarget, startTestDeployment, startTestRun, type TestDeployment, waitFor } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script (scripts/build.mjs), typed by use here
import { apps as builtApps } from "../scripts/build.mjs";

/**
 * The production build (issue 18 item 5): scripts/build.mjs compiles each background app into one JavaScript file,
 * started with plain node as `pnpm start` does. Each built app reaches "ready"; a run goes from start to completed
 * through the built relay, engine and io lane; the start-up time of each app, tsx against the build, is measured side
 * by side (printed, never asserted: the machine's load decides absolute times).
 */
let d: TestDeployment;
let target: HttpTarget;

beforeAll(async () => {
  d = await startTestDeployment();
  target = d.closeAtStop(await startHttpTarget());
  await ensureAppsBuilt();
});
afterAll(async () => d?.stop());

const env = { RELAY_POLL_MS: "200", SWEEP_INTERVAL_MS: "500", INBOUND_SMTP_PORT: "0", LANE: "io" };

/** Milliseconds from spawn to the app's "ready" line. */
async function startup(app: AppName, built: boolean): Promise<number> {
  const began = performance.now();
  const p = d.spawn({ app, env, built, label: `${app}${built ? " (built)" : ""}` });
  try {
    await p.waitForOutput(/ready/, 60_000);
    return performance.now() - began;
  } finally {
    await p.stop();
  }
}

describe("the production build", () => {
  it("every built app starts with plain node; a run completes through the built relay, engine and io lane", async () => {
    await d.startApps([{ app: "relay", env, built: true }, { app: "engine", env, built: true }, { app: "lane-worker", env, built: true }], 60_000);
    await publish(d.t.db, httpChainGraph(target.url, 2), { automation: "built" });
    const runId = await startTestRun(d.t.db, "built", { id: "evt_built" });
    await waitFor(async () => (await d.t.sql.query("SELECT status FROM runs WHERE id = $1", [runId])).rows[0]?.status === "completed", 60_000, "the run to complete");
    expect(target.calls.get(`${runId}/call_1/1`)).toBe(1);
    expect(target.calls.get(`${runId}/call_2/1`)).toBe(1);
    await d.stopApps();
  });

  it("start-up time per app, tsx against the build, side by side", async () => {
    const rows: string[] = [];
    for (const app of builtApps as AppName[]) {
      const tsx = await startup(app, false);
      const built = await startup(app, true);
      expect(built).toBeGreaterThan(0);
      rows.push(`${app.padEnd(12)} tsx ${Math.round(tsx).toString().padStart(5)} ms   build ${Math.round(built).toString().padStart(5)} ms   ${(tsx / built).toFixed(2)}x`);
    }
    console.log(`start-up to "ready":\n  ${rows.join("\n  ")}`);
  });
});
