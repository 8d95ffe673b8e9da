import { createTestDatabase, type HttpTarget, publish, startHttpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { runEffect } from "../src/providers/effects/ledger";
import { resolveNeedsReview } from "../src/run/runs/resolve";
import { advanceRun } from "../src/run/engine/advance";
import { createLogger } from "../src/base/log";
import { startRun } from "../src/run/start/start-run";
import { stepsClaimIfLeaseFree } from "../src/store/sql/steps-claim";
import { stepsSettleIfToken } from "../src/store/sql/steps-settle";
import { StepRunner } from "../src/run/steps/runner";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";
import { effectKinds } from "../src/versions/kinds/registry";

let t: TestDatabase;
let target: HttpTarget;
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

const oneCall = (automation: string, idempotent: boolean) =>
  publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "call", kind: "http_request", config: { url: target.url, idempotent, maxAttempts: 3 } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "call" },
        { from: "call", to: "e" },
      ],
    }),
    { automation },
  );

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  await oneCall("idem", true);
  await oneCall("plain", false);
});
afterAll(async () => {
  await target?.close();
  await t?.drop();
});

async function readyStep(automation: string) {
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: automation,
    rawBody: "{}",
    body: { id: `e${++n}` },
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
  const [{ org_id: orgId }] = await rows("SELECT org_id FROM runs WHERE id = $1", [runId]);
  await advanceRun(t.db, graphs, { orgId, runId, reason: "started" });
  const [{ id: stepId }] = await rows("SELECT id FROM steps WHERE run_id = $1", [runId]);
  return { runId, orgId: orgId as string, stepId: stepId as string, key: `${runId}/call/1` };
}
const runner = () => new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 2_000, heartbeatMs: 600 }, log });

describe("the effect ledger", () => {
  it("a settled effect is replayed to a later attempt without calling the provider again", async () => {
    const { stepId, key } = await readyStep("idem");
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(target.calls.get(key)).toBe(1);
    // The step is retried (say its settle was lost): the effect's stored answer comes back, no second call.
    await t.sql.query("UPDATE steps SET status = 'ready', advanced_at = NULL WHERE id = $1", [stepId]);
    await t.sql.query("UPDATE runs SET status = 'running', finished_at = NULL WHERE id = (SELECT run_id FROM steps WHERE id = $1)", [stepId]);
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(target.calls.get(key)).toBe(1);
    expect(await rows("SELECT status, attempts FROM effects WHERE key = $1", [key])).toEqual([{ status: "settled", attempts: 1 }]);
  });

  it("never overlaps a live claim: a second attempt waits until the first one's lease lapses", async () => {
    const { runId, orgId, stepId, key } = await readyStep("idem");
    await t.sql.query(
      `INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until, provider_idempotent)
       VALUES ($1, $2, $3, $4, 'http_request', 'in_flight', 'someone-else', now() + interval '800 milliseconds', true)`,
      [orgId, runId, stepId, key],
    );
    const started = performance.now();
    let calledAt = 0;
    const outcome = await runEffect(t.db, {
      orgId,
      runId,
      stepId,
      key,
      kind: "http_request",
      owner: "me",
      leaseMs: 2_000,
      providerIdempotent: true,
      signal: new AbortController().signal,
      perform: async () => {
        calledAt = performance.now() - started;
        return { kind: "done", output: { ok: true } };
      },
    });
    // The answer is handed back to be recorded with the step's settle, under this attempt's owner token.
    expect(outcome).toEqual({ kind: "done", output: { ok: true }, effect: { orgId, key, owner: "me" } });
    expect(calledAt).toBeGreaterThanOrEqual(700); // only after the other claim's lease lapsed
    expect(await rows("SELECT status, owner, attempts FROM effects WHERE key = $1", [key])).toEqual([{ status: "in_flight", owner: "me", attempts: 2 }]);
  });

  it("an uncertain call to a provider that honours the key is re-sent with the same key; the provider acts once", async () => {
    const { runId, orgId, stepId, key } = await readyStep("idem");
    await fetch(target.url, { method: "POST", headers: { "idempotency-key": key }, body: "{}" }); // the first attempt's call got through
    await t.sql.query(
      `INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until, provider_idempotent)
       VALUES ($1, $2, $3, $4, 'http_request', 'in_flight', 'crashed', now() - interval '1 second', true)`,
      [orgId, runId, stepId, key],
    );
    const effectsBefore = target.effects();
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(target.calls.get(key)).toBe(2);
    expect(target.effects()).toBe(effectsBefore); // the repeat was answered from the first result
  });

  it("a refusal (503) from a provider that cannot deduplicate is retried as a plain first attempt, not parked", async () => {
    const { stepId, key } = await readyStep("plain");
    target.behave({ failFirst: 1, failStatus: 503 });
    try {
      expect((await runner().run(stepId)).kind).toBe("retry_scheduled");
      expect(await rows("SELECT count(*)::int AS n FROM effects WHERE key = $1", [key])).toEqual([{ n: 0 }]); // given back
      await t.sql.query("UPDATE steps SET available_at = now() WHERE id = $1", [stepId]);
      expect((await runner().run(stepId)).kind).toBe("settled");
      expect(await rows("SELECT status, attempts FROM effects WHERE key = $1", [key])).toEqual([{ status: "settled", attempts: 1 }]);
    } finally {
      target.behave({ failFirst: 0 });
    }
  });

  it("a lapsed first claim whose call never began (a crash after the claim) is forgotten: one plain first attempt", async () => {
    const { runId, orgId, stepId, key } = await readyStep("plain");
    await t.sql.query(
      `INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until, provider_idempotent)
       VALUES ($1, $2, $3, $4, 'http_request', 'in_flight', 'crashed', now() - interval '1 second', false)`,
      [orgId, runId, stepId, key],
    );
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(target.calls.get(key)).toBe(1);
    expect(await rows("SELECT status, attempts FROM effects WHERE key = $1", [key])).toEqual([{ status: "settled", attempts: 1 }]);
  });

  it("an uncertain call to a provider that cannot deduplicate is parked as needs_review and never re-sent", async () => {
    const { runId, orgId, stepId, key } = await readyStep("plain");
    // The call began (started_at), then its worker died: it may or may not have reached the provider.
    await t.sql.query(
      `INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until, provider_idempotent, started_at)
       VALUES ($1, $2, $3, $4, 'http_request', 'in_flight', 'crashed', now() - interval '1 second', false, now() - interval '2 seconds')`,
      [orgId, runId, stepId, key],
    );
    expect((await runner().run(stepId)).kind).toBe("parked");
    expect(target.calls.get(key)).toBeUndefined();
    expect(await rows("SELECT status FROM effects WHERE key = $1", [key])).toEqual([{ status: "needs_review" }]);
    const [step] = await rows("SELECT status, error FROM steps WHERE id = $1", [stepId]);
    expect(step).toMatchObject({ status: "parked", error: { code: "needs_review", key, attempts: 1 } });
    expect(await rows("SELECT status FROM runs WHERE id = $1", [runId])).toEqual([{ status: "running" }]);
  });

  it("a person resolves needs_review: retry sends once with the same key; done walks on with the note; abandon stops the run", async () => {
    const uncertain = async () => {
      const s = await readyStep("plain");
      await t.sql.query(
        `INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until, provider_idempotent, started_at)
         VALUES ($1, $2, $3, $4, 'http_request', 'in_flight', 'crashed', now() - interval '1 second', false, now() - interval '2 seconds')`,
        [s.orgId, s.runId, s.stepId, s.key],
      );
      expect((await runner().run(s.stepId)).kind).toBe("parked");
      return s;
    };
    const resolve = (s: { orgId: string; runId: string; stepId: string }, action: "done" | "retry" | "abandon", note: string) =>
      resolveNeedsReview(t.db, graphs, { ...s, action, note, by: "sam@acme.test" });

    const retried = await uncertain();
    await expect(resolve(retried, "retry", " ")).rejects.toThrow(/note is required/);
    expect(await resolve(retried, "retry", "not in the provider's log")).toEqual({ status: "running" });
    expect((await runner().run(retried.stepId)).kind).toBe("settled");
    expect(target.calls.get(retried.key)).toBe(1);
    await expect(resolve(retried, "retry", "again")).rejects.toThrow(/the run is completed/);

    const done = await uncertain();
    expect(await resolve(done, "done", "found it in the provider's dashboard")).toEqual({ status: "completed" });
    expect(target.calls.get(done.key)).toBeUndefined();
    expect(await rows("SELECT status, result->>'note' AS note FROM effects WHERE key = $1", [done.key])).toEqual([
      { status: "settled", note: "found it in the provider's dashboard" },
    ]);

    const abandoned = await uncertain();
    expect(await resolve(abandoned, "abandon", "customer asked us to stop")).toEqual({ status: "failed" });
    const types = (await rows("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", [abandoned.runId])).map((r) => r.type);
    expect(types).toContain("review.abandoned");
    expect(types.at(-1)).toBe("run.failed");
  });

  it("the step claim takes the effect key in its own commit; a step that never calls the provider gives it back", async () => {
    const { stepId, key } = await readyStep("plain");
    const claimed = await stepsClaimIfLeaseFree(t.sql, stepId, "w", 2_000, effectKinds());
    expect(claimed?.effect).toEqual({ claimed: true });
    expect(await rows("SELECT status, owner, provider_idempotent FROM effects WHERE key = $1", [key])).toEqual([
      { status: "in_flight", owner: `${stepId}:1`, provider_idempotent: null },
    ]);
    // A second claim while the first holds the step is refused as a whole (no effect read, no second owner).
    expect(await stepsClaimIfLeaseFree(t.sql, stepId, "w2", 2_000, effectKinds())).toBeUndefined();
    await t.sql.query("UPDATE steps SET status = 'ready', owner = NULL, lease_until = NULL, available_at = now() WHERE id = $1", [stepId]);
    await t.sql.query("DELETE FROM effects WHERE key = $1", [key]);
    // A handler that decides not to act (a skipped send, a bad template) never uses the claim: it is given back.
    const skipping = new StepRunner({
      db: t.db,
      graphs,
      worker: "w",
      lane: { ...lanes.io, leaseMs: 2_000, heartbeatMs: 600 },
      log,
      handlers: { http_request: async () => ({ kind: "done", output: { skipped: true } }) },
    });
    expect((await skipping.run(stepId)).kind).toBe("settled");
    expect(await rows("SELECT count(*)::int AS n FROM effects WHERE key = $1", [key])).toEqual([{ n: 0 }]);
    expect(target.calls.get(key)).toBeUndefined();
  });

  it("a settle whose effect was taken over by a newer attempt is refused as a whole (HF002)", async () => {
    const { stepId, key, orgId } = await readyStep("idem");
    const claimed = await stepsClaimIfLeaseFree(t.sql, stepId, "w", 2_000, effectKinds());
    expect(claimed?.effect).toEqual({ claimed: true });
    await t.sql.query("UPDATE effects SET owner = 'newer:2' WHERE key = $1", [key]);
    const settled = await stepsSettleIfToken(t.sql, {
      step: { id: stepId, attempt: 1 },
      worker: "w",
      status: "done",
      output: { ok: true },
      effect: { orgId, key, owner: `${stepId}:1`, result: { ok: true }, error: null },
    });
    expect(settled.changed).toBe(false);
    expect(await rows("SELECT status FROM steps WHERE id = $1", [stepId])).toEqual([{ status: "running" }]);
    expect(await rows("SELECT status, owner FROM effects WHERE key = $1", [key])).toEqual([{ status: "in_flight", owner: "newer:2" }]);
  });
});
