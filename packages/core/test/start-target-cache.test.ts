import { Prisma, sqlOf } from "@holdfast/db";
import { createTestDatabase, httpChainGraph, publish, type TestDatabase } from "@holdfast/testkit";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changeLifecycle } from "../src/run/automations/lifecycle";
import { automationsFindStartTarget, startTargetGuard } from "../src/store/sql/automations";
import { SignatureError } from "../src/run/start/signature";
import { pruneDue, pruneEvery } from "../src/run/start/deliveries";
import { type StartRequest, startRun } from "../src/run/start/start-run";
import { revokePreviousTriggerCredentials, rotateTriggerCredential } from "../src/versions/triggers/credentials";

/**
 * A start of a trigger URL this process started before is one statement (run/start/target-cache.ts): the start target it
 * kept is checked by that statement. Each change that must refuse or redirect the next delivery is made between two
 * starts, and the second start must see it.
 */
let t: TestDatabase;
let orgId: string;
let automationId: string;
/** The named statements the starts sent on the client's pool, in order. */
const sent: string[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  ({ orgId, automationId } = await publish(t.db, httpChainGraph("https://example.com/hook", 1), { automation: "kept" }));
  const pool = sqlOf(t.db) as unknown as { query: (q: unknown, ...rest: unknown[]) => unknown };
  const query = pool.query.bind(pool);
  pool.query = (q: unknown, ...rest: unknown[]) => {
    const name = (q as { name?: string } | null)?.name;
    if (name?.startsWith("holdfast_")) sent.push(name);
    return query(q, ...rest);
  };
});
afterAll(async () => {
  await t?.drop();
});

let n = 0;
function signedStart(secret: string, extra: Partial<StartRequest> = {}) {
  const id = `msg_${++n}`;
  const rawBody = JSON.stringify({ id, n });
  return startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "kept",
    rawBody,
    body: JSON.parse(rawBody),
    headers: { "webhook-id": id, "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": new Webhook(secret).sign(id, new Date(), rawBody) },
    via: "test",
    auth: { kind: "http", urlToken: null },
    ...extra,
  });
}

/** The statements one start sends. */
async function statementsOf(start: () => Promise<unknown>): Promise<string[]> {
  sent.length = 0;
  await start().catch(() => {});
  return [...sent];
}

const runCount = async () => (await t.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM runs")).rows[0]?.n;
const deliveryCount = async () => (await t.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM trigger_deliveries")).rows[0]?.n;

describe("a kept start target", () => {
  let secret: string;

  it("makes the next start of the same URL one statement, the delivery's too", async () => {
    secret = await rotateTriggerCredential(t.db, orgId, automationId, "signing_secret");
    await revokePreviousTriggerCredentials(t.db, orgId, automationId, "signing_secret");
    expect(await statementsOf(() => signedStart(secret))).toEqual(["holdfast_start_target", "holdfast_run_start"]);
    expect(await statementsOf(() => signedStart(secret))).toEqual(["holdfast_run_start_g"]);
    const delivery = { delivery: { contentType: "application/json", bodyBytes: 10 } };
    const first = await statementsOf(() => signedStart(secret, delivery));
    expect(first).toHaveLength(1);
    expect(first[0]).toMatch(/^holdfast_delivery_start_s?p?g$/);
    // The first accepted delivery set the sample: the kept answer (sample wanted) is stale once, then kept again.
    const second = await statementsOf(() => signedStart(secret, delivery));
    expect(second).toEqual([expect.stringMatching(/^holdfast_delivery_start_sp?g$/), "holdfast_start_target", expect.stringMatching(/^holdfast_delivery_start_p?$/)]);
    expect(await statementsOf(() => signedStart(secret, delivery))).toEqual([expect.stringMatching(/^holdfast_delivery_start_p?g$/)]);
  });

  it("is refused by the start's statement once the automation is paused: the pause holds for the very next delivery", async () => {
    await signedStart(secret);
    const before = await runCount();
    await changeLifecycle(t.db, { orgId, automationId, change: { action: "pause", mode: "refuse", runs: "continue" }, by: "test" });
    const statements = await statementsOf(() => signedStart(secret));
    await expect(signedStart(secret)).rejects.toMatchObject({ code: "automation_paused" });
    expect(statements).toEqual(["holdfast_run_start_g", "holdfast_start_target"]);
    expect(await runCount()).toBe(before);
    // The delivery's statement, with its delivery row and the sample, writes nothing either.
    const deliveries = await deliveryCount();
    await expect(signedStart(secret, { delivery: { contentType: "application/json", bodyBytes: 10 } })).rejects.toMatchObject({ code: "automation_paused" });
    expect(await deliveryCount()).toBe(deliveries);
    expect(await runCount()).toBe(before);
    await changeLifecycle(t.db, { orgId, automationId, change: { action: "resume" }, by: "test" });
    expect((await signedStart(secret)).duplicate).toBe(false);
  });

  it("does not outlive a revoked signing secret, nor one whose overlap ran out with no write at all", async () => {
    const old = secret;
    await signedStart(old);
    secret = await rotateTriggerCredential(t.db, orgId, automationId, "signing_secret");
    expect((await signedStart(old)).duplicate).toBe(false); // inside the rotation's overlap
    expect((await signedStart(secret)).duplicate).toBe(false);
    await revokePreviousTriggerCredentials(t.db, orgId, automationId, "signing_secret");
    await expect(signedStart(old)).rejects.toBeInstanceOf(SignatureError);

    // The overlap ends by the clock: the credentials' rows do not change when it does.
    const older = secret;
    secret = await rotateTriggerCredential(t.db, orgId, automationId, "signing_secret");
    await t.sql.query("UPDATE trigger_credentials SET expires_at = now() + interval '1 second' WHERE automation_id = $1 AND expires_at > now()", [automationId]);
    expect((await signedStart(older)).duplicate).toBe(false);
    expect(await statementsOf(() => signedStart(older))).toEqual(["holdfast_run_start_g"]); // kept, with the older secret in it
    await new Promise((r) => setTimeout(r, 1_200));
    const before = await runCount();
    await expect(signedStart(older)).rejects.toBeInstanceOf(SignatureError);
    expect(await runCount()).toBe(before);
    expect((await signedStart(secret)).duplicate).toBe(false);
  });

  it("does not outlive a revoked URL token, whatever else the request lacks", async () => {
    const { orgId: o, automationId: a } = await publish(t.db, httpChainGraph("https://example.com/hook", 1), { automation: "tokened", triggerAuth: "url_token" });
    const token = await rotateTriggerCredential(t.db, o, a, "url_token");
    await revokePreviousTriggerCredentials(t.db, o, a, "url_token");
    const tokenStart = (urlToken: string, id: string | null) =>
      startRun(t.db, {
        orgSlug: "acme",
        automationSlug: "tokened",
        rawBody: "{}",
        body: id ? { id } : {},
        headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
        via: "test",
        auth: { kind: "http", urlToken },
      });
    await tokenStart(token, "t1");
    expect(await statementsOf(() => tokenStart(token, "t2"))).toEqual(["holdfast_run_start_g"]);
    const fresh = await rotateTriggerCredential(t.db, o, a, "url_token");
    await revokePreviousTriggerCredentials(t.db, o, a, "url_token");
    // Kept, the revoked token still matches, and this request has no id (an identical-submission start, which takes the
    // engine's path, not the kept one): the answer is the fresh one, 401.
    await expect(tokenStart(token, null)).rejects.toBeInstanceOf(SignatureError);
    await expect(tokenStart(token, "t3")).rejects.toBeInstanceOf(SignatureError);
    expect((await tokenStart(fresh, "t4")).duplicate).toBe(false);
    // A form post without an id starts a run with the current token (form intake).
    expect((await tokenStart(fresh, null)).duplicate).toBe(false);
  });

  it("starts a version published since on its next start", async () => {
    const first = await signedStart(secret);
    const { version } = await publish(t.db, httpChainGraph("https://example.com/hook", 2), { automation: "kept" });
    expect(version).toBe(first.version + 1);
    expect((await signedStart(secret)).version).toBe(version);
  });

  it("counts a delivery once for the log's prune when its kept target was stale and it was read again", async () => {
    const other = await publish(t.db, httpChainGraph("https://example.com/hook", 1), { automation: "prunes" });
    const key = await rotateTriggerCredential(t.db, orgId, other.automationId, "signing_secret");
    await revokePreviousTriggerCredentials(t.db, orgId, other.automationId, "signing_secret");
    const delivery = { automationSlug: "prunes", delivery: { contentType: "application/json", bodyBytes: 10 } };
    expect(await statementsOf(() => signedStart(key, delivery))).toEqual(["holdfast_start_target", expect.stringMatching(/^holdfast_delivery_start_s?p$/)]);
    // A version published since: the next delivery's kept target is stale, and the delivery goes again on a fresh read.
    await publish(t.db, httpChainGraph("https://example.com/hook", 2), { automation: "prunes" });
    const fallback = await statementsOf(() => signedStart(key, delivery));
    expect(fallback).toEqual([expect.stringMatching(/^holdfast_delivery_start_s?g$/), "holdfast_start_target", expect.stringMatching(/^holdfast_delivery_start_s?$/)]);
    for (let i = 2; i < pruneEvery; i++) await signedStart(key, delivery);
    // Eight deliveries counted eight times: the ninth prunes (the stale attempt counted as a delivery of its own
    // made it nine, and the prune came a delivery late).
    expect(await t.sql.query("SELECT count(*)::int AS n FROM trigger_deliveries WHERE automation_id = $1", [other.automationId])).toMatchObject({ rows: [{ n: pruneEvery }] });
    expect(pruneDue(orgId, "prunes")).toBe(true);
  });

  it("judges the fingerprint and a signed timestamp in the statement, by the database clock", async () => {
    const found = await automationsFindStartTarget(sqlOf(t.db), "acme", "kept");
    const target = found.target;
    if (!target) throw new Error("no target");
    const guard = { orgSlug: "acme", automationSlug: "kept", fingerprint: target.fingerprint, signedAt: null, toleranceSeconds: 300 };
    const passes = async (g: typeof guard | (Omit<typeof guard, "signedAt"> & { signedAt: number })) =>
      (await t.db.$queryRaw<unknown[]>(Prisma.sql`SELECT 1 AS one ${startTargetGuard(g)}`)).length === 1;
    expect(await passes(guard)).toBe(true);
    expect(await passes({ ...guard, signedAt: target.now - 200 })).toBe(true);
    expect(await passes({ ...guard, signedAt: target.now - 400 })).toBe(false);
    expect(await passes({ ...guard, signedAt: target.now + 400 })).toBe(false);
    expect(await passes({ ...guard, fingerprint: "0".repeat(64) })).toBe(false);
    expect(await passes({ ...guard, automationSlug: "other" })).toBe(false);
    // Every column but the clock is in it: the fingerprint is the same read again, and changes with the answer.
    const again = await automationsFindStartTarget(sqlOf(t.db), "acme", "kept");
    expect(again.target?.fingerprint).toBe(target.fingerprint);
    await t.sql.query("UPDATE automations SET trigger_auth = 'url_token' WHERE id = $1", [automationId]);
    expect(await passes(guard)).toBe(false);
    await t.sql.query("UPDATE automations SET trigger_auth = 'signed' WHERE id = $1", [automationId]);
    expect(await passes(guard)).toBe(true);
  });
});
