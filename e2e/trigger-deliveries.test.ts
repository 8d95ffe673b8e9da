import { createAutomation, triggerSettings } from "@holdfast/core/versions";
import { signPayload } from "@holdfast/core/run";
import { addMember, connectAs, publish, screenshots, sessionCookieFor, signedInPage, startOnlyGraph, startTestDeployment, type TestDeployment, type TrpcReply, testPassword, trpcCall, trpcData } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The trigger panel's delivery log, sample and Test run, through the built web app and a real database: accepted,
 * repeated and refused deliveries (bad signature, unknown token, a body that is neither JSON nor a form, no published
 * version) are listed with their reason in words, and nothing a refused request sent is stored anywhere; the log
 * stays bounded; the first accepted payload becomes the sample and "Use as sample" replaces it; Test run starts a run
 * of the published version marked as a test (the runs list shows the badge, in Chromium); another organisation
 * reaches none of it. Screenshots: e2e/artifacts/trigger-deliveries*.png.
 */
let d: TestDeployment;
const ids = {} as Record<"acme" | "globex" | "leads" | "signed" | "draft" | "bulk" | "fresh", string>;
let leadsToken = "";
let draftSecret = "";
let olivia = "";
let vic = "";
let bob = "";
/** Written into every refused request (body, headers, URL): it must not be stored anywhere. */
const marker = "ATTACKER-MARKER-5f1c";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const shot = screenshots("trigger-deliveries");
const trpc = (cookie: string, path: string, input: unknown, type: "query" | "mutation" = "mutation") => trpcCall(d.web.base, cookie, path, input, type);
const data = trpcData;

interface Delivery {
  id: string;
  outcome: "accepted" | "duplicate" | "refused";
  status: number;
  reason: string | null;
  runId: string | null;
  startKey: string | null;
  webhookId: string | null;
  contentType: string | null;
  bodyBytes: number | null;
}

const deliveries = (automationId: string, cookie = olivia) => data<Delivery[]>(trpc(cookie, "triggers.deliveries", { orgSlug: "acme", automationId }, "query"));

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${d.web.base}/api/hooks/${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

const signed = (secret: string, id: string, body: string) => {
  const at = Math.floor(Date.now() / 1000);
  return { "webhook-id": id, "webhook-timestamp": String(at), "webhook-signature": signPayload(secret, id, at, body) };
};

const bare = () => startOnlyGraph();

beforeAll(async () => {
  d = await startTestDeployment();
  const leads = await publish(d.t.db, bare(), { org: "acme", automation: "leads", triggerAuth: "url_token" });
  const signedFlow = await publish(d.t.db, bare(), { org: "acme", automation: "signed-flow" });
  const bulk = await publish(d.t.db, bare(), { org: "acme", automation: "bulk", triggerAuth: "url_token" });
  const fresh = await publish(d.t.db, bare(), { org: "acme", automation: "fresh" });
  const globex = await publish(d.t.db, bare(), { org: "globex", automation: "theirs" });
  Object.assign(ids, { acme: leads.orgId, globex: globex.orgId, leads: leads.automationId, signed: signedFlow.automationId, bulk: bulk.automationId, fresh: fresh.automationId });
  ids.draft = (await d.t.db.$transaction((tx) => createAutomation(tx, { orgId: ids.acme, slug: "draft", name: "Never published" }))).id;
  leadsToken = (await triggerSettings(d.t.db, ids.acme, ids.leads, "url_token")).urlToken;
  draftSecret = (await triggerSettings(d.t.db, ids.acme, ids.draft, "signed")).signingSecret;
  await addMember(d.t.db, ids.acme, "olivia@acme.test", "Olivia", "owner");
  await addMember(d.t.db, ids.acme, "vic@acme.test", "Vic", "viewer");
  await addMember(d.t.db, ids.globex, "bob@globex.test", "Bob", "owner");
  await d.startWeb({ LOG_LEVEL: "warn" });
  olivia = await sessionCookieFor(d.t.db, "olivia@acme.test", testPassword);
  vic = await sessionCookieFor(d.t.db, "vic@acme.test", testPassword);
  bob = await sessionCookieFor(d.t.db, "bob@globex.test", testPassword);
}, 300_000);

afterAll(async () => d?.stop());

describe("the delivery log", () => {
  it("lists accepted, duplicate and refused deliveries with their reasons; a refused request leaves nothing of itself", async () => {
    const first = JSON.stringify({ id: "evt_1", email: "maya@example.com", plan: "pro" });
    const accepted = await post(`acme/leads/${leadsToken}`, first);
    expect(accepted.status).toBe(202);
    const { runId } = (await accepted.json()) as { runId: string };
    expect((await post(`acme/leads/${leadsToken}`, first)).status).toBe(200);

    // Refused, each carrying the marker wherever a sender can put text.
    const evil = JSON.stringify({ id: `evt_${marker}`, note: marker });
    const refusals: [string, Response][] = [
      ["unknown token", await post(`acme/leads/${marker}x${"y".repeat(30)}`, evil, { "webhook-id": marker })],
      ["bad body", await post(`acme/leads/${leadsToken}`, `not json ${marker}`, { "content-type": `text/plain; note=${marker}`, "webhook-id": marker })],
      ["bad signature", await post("acme/signed-flow", evil, { ...signed(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, marker, evil) })],
      ["no published version", await post("acme/draft", evil, signed(draftSecret, `msg_${marker}`, evil))],
      ["unknown automation", await post("acme/nobody-here", evil, { "webhook-id": marker })],
    ];
    expect(refusals.map(([what, r]) => [what, r.status])).toEqual([
      ["unknown token", 401],
      ["bad body", 400],
      ["bad signature", 401],
      ["no published version", 409],
      ["unknown automation", 404],
    ]);

    const leads = await deliveries(ids.leads);
    expect(leads.map((d) => [d.outcome, d.status, d.reason])).toEqual([
      ["refused", 400, "body is not JSON or form data"],
      ["refused", 401, "unknown or revoked URL token"],
      ["duplicate", 200, null],
      ["accepted", 202, null],
    ]);
    expect(leads[2]?.runId).toBe(runId);
    expect(leads[3]).toMatchObject({ runId, startKey: "ev:evt_1", contentType: "application/json", bodyBytes: Buffer.byteLength(first) });
    // The refused ones name no run, and keep neither the sender's webhook-id nor the content type's parameters.
    expect(leads.slice(0, 2).map((d) => [d.runId, d.webhookId, d.startKey])).toEqual([
      [null, null, null],
      [null, null, null],
    ]);
    expect(leads[0]?.contentType).toBe("text/plain");
    expect((await deliveries(ids.signed)).map((d) => [d.outcome, d.status, d.reason])).toEqual([["refused", 401, "signature did not match"]]);
    // A request that passed its credential check keeps its webhook-id.
    expect((await deliveries(ids.draft)).map((d) => [d.outcome, d.status, d.reason, d.webhookId])).toEqual([
      ["refused", 409, "the automation is a draft: publish it first", `msg_${marker}`],
    ]);

    // Nothing a refused request sent is stored: the marker is nowhere but in that authenticated webhook-id.
    // As the superuser that created the database: row-level security hides nothing from it.
    const admin = await connectAs(d.t.adminUrl, new URL(d.t.adminUrl).username);
    try {
      const tables = (await admin.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).rows.map((r) => r.tablename as string);
      const found: string[] = [];
      for (const table of tables) {
        const { rows } = await admin.query(`SELECT count(*)::int AS n FROM "${table}" x WHERE x::text LIKE $1`, [`%${marker}%`]);
        if (rows[0].n > 0) found.push(`${table}: ${rows[0].n}`);
      }
      expect(found).toEqual(["trigger_deliveries: 1"]);
      expect((await admin.query("SELECT reason FROM trigger_deliveries WHERE webhook_id LIKE $1", [`%${marker}%`])).rows).toEqual([
        { reason: "the automation is a draft: publish it first" },
      ]);
    } finally {
      await admin.end();
    }
  });

  it("stays bounded: an automation keeps about the newest 50 deliveries and 10 refusals (a flood of refusals pushes out none), and the panel shows 20", async () => {
    for (let i = 0; i < 120; i += 8) {
      await Promise.all(
        Array.from({ length: Math.min(8, 120 - i) }, (_, k) => post(`acme/bulk/${(i + k) % 3 === 0 ? "wrong-token" : "x"}`, JSON.stringify({ id: `bulk_${i + k}` }))),
      );
    }
    const token = (await triggerSettings(d.t.db, ids.acme, ids.bulk, "url_token")).urlToken;
    for (let i = 0; i < 60; i++) expect((await post(`acme/bulk/${token}`, JSON.stringify({ id: `bulk_ok_${i}` }))).status).toBe(202);
    const [{ n }] = await q("SELECT count(*)::int AS n FROM trigger_deliveries WHERE automation_id = $1", [ids.bulk]);
    // 180 written by one web process; every 8th delivery of an automation prunes it to the newest 50 accepted (or
    // repeated) and the newest 10 refused.
    expect(n).toBeGreaterThanOrEqual(60);
    expect(n).toBeLessThanOrEqual(74);
    const newest = await q("SELECT run_id FROM trigger_deliveries WHERE automation_id = $1 ORDER BY seq DESC LIMIT 1", [ids.bulk]);
    const [lastRun] = await q("SELECT id FROM runs WHERE automation_id = $1 AND start_key LIKE '%:ev:bulk_ok_59'", [ids.bulk]);
    expect(newest[0]?.run_id).toBe(lastRun?.id);
    const shown = await deliveries(ids.bulk);
    expect(shown).toHaveLength(20);
    expect(shown.every((d) => d.outcome === "accepted")).toBe(true);
    // A flood of refused requests (anyone can send them) keeps at most ~10 refusals: the real deliveries stay.
    for (let i = 0; i < 96; i += 8) await Promise.all(Array.from({ length: 8 }, () => post("acme/bulk/wrong-token", "{}")));
    const kept = await q("SELECT outcome, count(*)::int AS n FROM trigger_deliveries WHERE automation_id = $1 GROUP BY outcome ORDER BY outcome", [ids.bulk]);
    const count = (o: string) => (kept.find((r) => r.outcome === o)?.n as number | undefined) ?? 0;
    expect(count("refused")).toBeLessThanOrEqual(17);
    expect(count("accepted")).toBeGreaterThanOrEqual(49); // a prune by a refused insert keeps one fewer of the others
  });
});

describe("the sample and Test run", () => {
  it("the first accepted payload became the sample; Use as sample replaces it; only accepted deliveries have one", async () => {
    const sample = () => data<Record<string, unknown> | null>(trpc(olivia, "triggers.sample", { orgSlug: "acme", automationId: ids.leads }, "query"));
    expect(await sample()).toEqual({ id: "evt_1", email: "maya@example.com", plan: "pro" });
    // A later accepted delivery does not replace it by itself...
    const second = { id: "evt_2", email: "sam@example.com", plan: "free", lead: { name: "Sam", tags: ["a", "b"] } };
    expect((await post(`acme/leads/${leadsToken}`, JSON.stringify(second))).status).toBe(202);
    expect(await sample()).toEqual({ id: "evt_1", email: "maya@example.com", plan: "pro" });
    // ...Use as sample does.
    const list = await deliveries(ids.leads);
    const evt2 = list.find((d) => d.startKey === "ev:evt_2") as Delivery;
    expect(await data(trpc(olivia, "triggers.useAsSample", { orgSlug: "acme", deliveryId: evt2.id }))).toMatchObject({ automationId: ids.leads, sample: second });
    expect(await sample()).toEqual(second);
    const refused = list.find((d) => d.outcome === "refused") as Delivery;
    expect(await trpc(olivia, "triggers.useAsSample", { orgSlug: "acme", deliveryId: refused.id })).toMatchObject({ ok: false, code: "NOT_FOUND" });
    // A viewer reads the log and the sample but cannot choose one.
    expect(await data(trpc(vic, "triggers.sample", { orgSlug: "acme", automationId: ids.leads }, "query"))).toEqual(second);
    expect(await trpc(vic, "triggers.useAsSample", { orgSlug: "acme", deliveryId: evt2.id })).toMatchObject({ ok: false, code: "FORBIDDEN" });
  });

  it("Test run starts a run of the published version with the sample, marked test, by the person; refused without a version or a sample", async () => {
    const started = await data<{ runId: string; version: number }>(trpc(olivia, "triggers.testRun", { orgSlug: "acme", automationId: ids.leads }));
    const again = await data<{ runId: string }>(trpc(olivia, "triggers.testRun", { orgSlug: "acme", automationId: ids.leads }));
    expect(again.runId).not.toBe(started.runId);
    const runs = await q("SELECT id, test, input, start_key, status FROM runs WHERE id = ANY($1) ORDER BY created_at", [[started.runId, again.runId]]);
    expect(runs.map((r) => r.test)).toEqual([true, true]);
    expect(runs[0].input).toEqual({ id: "evt_2", email: "sam@example.com", plan: "free", lead: { name: "Sam", tags: ["a", "b"] } });
    expect(runs[0].start_key).toMatch(new RegExp(`^${ids.leads}:test:`));
    expect(runs[0].status).toBe("completed");
    const [event] = await q("SELECT data FROM run_events WHERE run_id = $1 AND type = 'run.started'", [started.runId]);
    expect(event.data).toMatchObject({ via: "test", test: true, by: "user:olivia@acme.test", version: 1 });
    // Test runs are not deliveries, and the webhook's runs are not tests.
    expect((await deliveries(ids.leads)).some((d) => d.runId === started.runId)).toBe(false);
    expect((await q("SELECT count(*)::int AS n FROM runs WHERE automation_id = $1 AND NOT test", [ids.leads]))[0].n).toBe(2);

    const draft = await trpc(olivia, "triggers.testRun", { orgSlug: "acme", automationId: ids.draft });
    expect(draft).toMatchObject({ ok: false, code: "PRECONDITION_FAILED" });
    expect((draft as { message: string }).message).toMatch(/^Publish first/);
    const noSample = await trpc(olivia, "triggers.testRun", { orgSlug: "acme", automationId: ids.fresh });
    expect(noSample).toMatchObject({ ok: false, code: "PRECONDITION_FAILED" });
    expect((noSample as { message: string }).message).toMatch(/^No sample yet: send one delivery/);
    expect(await trpc(vic, "triggers.testRun", { orgSlug: "acme", automationId: ids.leads })).toMatchObject({ ok: false, code: "FORBIDDEN" });
  });

  it("in Chromium: the panel lists the deliveries with reasons, Test run links to its run, the runs list shows the Test badge", async () => {
    const browser = await d.launchBrowser();
    try {
      const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1500, height: 1100 }, timezoneId: "America/New_York" });
      await page.goto(`${d.web.base}/automations/${ids.leads}`);
      await page.locator('[data-node="t"]').click();
      const log = page.locator('section[aria-label="recent deliveries"]');
      await expect.poll(() => log.locator("tr[data-delivery]").count()).toBe(5);
      await expect.poll(async () => (await log.locator('tr[data-outcome="refused"]').first().textContent()) ?? "").toContain("Refused: body is not JSON or form data.");
      expect((await log.locator('tr[data-outcome="refused"]').nth(1).textContent()) ?? "").toContain("unknown or revoked URL token");
      expect((await log.locator("th").first().textContent()) ?? "").toContain("America/New_York");
      expect(await log.locator('tr[data-outcome="accepted"] button', { hasText: "Use as sample" }).count()).toBe(2);
      expect(await log.locator('tr[data-outcome="refused"] button').count()).toBe(0);
      // The list scrolls in its own box: deliveries arriving while the panel is open (it refreshes every 4 s) do not
      // move what is below it.
      const box = log.locator('section[aria-label="recent deliveries, scrollable"]');
      expect(await box.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
      const below = page.locator('section[aria-label="sample and test run"]');
      const yBefore = (await below.boundingBox())?.y;
      expect(yBefore).toBeGreaterThan(0);
      await Promise.all([1, 2].map(() => post("acme/leads/not-the-token", "{}")));
      await expect.poll(() => log.locator("tr[data-delivery]").count(), { timeout: 15_000 }).toBe(7);
      expect((await below.boundingBox())?.y).toBe(yBefore);
      // The sample, collapsed, as key: value lines.
      const sample = page.locator("details.sample");
      await sample.locator("summary").click();
      expect((await sample.textContent()) ?? "").toContain("lead.name");
      expect((await sample.textContent()) ?? "").toContain("a, b");

      // It asks first (a test run sends real email); accepted here.
      page.once("dialog", (d) => void d.accept());
      await page.locator('button[name="test-run"]').click();
      const status = page.locator('section[aria-label="sample and test run"] [role="status"]');
      await expect.poll(() => status.textContent().then((x) => x ?? "").catch(() => "")).toContain("Test run started: open it");
      const href = (await status.locator("a").getAttribute("href")) as string;
      const runId = href.replace("/runs/", "");
      expect((await q("SELECT test FROM runs WHERE id = $1", [runId]))[0]?.test).toBe(true);
      await shot(page, "panel");
      await shot(log, "log");

      await page.goto(`${d.web.base}/`);
      const row = page.locator(`tr[data-run="${runId}"]`);
      expect(await row.locator(".badge", { hasText: "Test" }).count()).toBe(1);
      // A run the webhook started has no badge.
      const [webhookRun] = await q("SELECT id FROM runs WHERE automation_id = $1 AND NOT test ORDER BY created_at LIMIT 1", [ids.leads]);
      expect(await page.locator(`tr[data-run="${webhookRun.id}"] .badge`, { hasText: "Test" }).count()).toBe(0);
      await shot(page, "runs");
      await row.locator("a").first().click();
      await page.waitForURL(`**/runs/${runId}`);
      expect((await page.locator("h1").textContent()) ?? "").toContain("Test run");
    } finally {
      await browser.close();
    }
  });
});

describe("another organisation", () => {
  it("reaches none of the log, the sample or Test run, by its own slug or acme's", async () => {
    const before = await q(
      "SELECT (SELECT count(*) FROM runs WHERE org_id = $1)::int AS runs, (SELECT md5(string_agg(COALESCE(sample_input::text, '-'), '' ORDER BY id)) FROM automations WHERE org_id = $1) AS samples",
      [ids.acme],
    );
    const [delivery] = await q("SELECT id FROM trigger_deliveries WHERE automation_id = $1 AND outcome = 'accepted' LIMIT 1", [ids.leads]);
    for (const orgSlug of ["acme", "globex"]) {
      const calls: [string, Promise<TrpcReply>][] = [
        ["deliveries", trpc(bob, "triggers.deliveries", { orgSlug, automationId: ids.leads }, "query")],
        ["sample", trpc(bob, "triggers.sample", { orgSlug, automationId: ids.leads }, "query")],
        ["useAsSample", trpc(bob, "triggers.useAsSample", { orgSlug, deliveryId: delivery.id })],
        ["testRun", trpc(bob, "triggers.testRun", { orgSlug, automationId: ids.leads })],
      ];
      for (const [what, call] of calls) expect(await call, `${what} via ${orgSlug}`).toMatchObject({ ok: false, code: "NOT_FOUND" });
    }
    expect(
      await q(
        "SELECT (SELECT count(*) FROM runs WHERE org_id = $1)::int AS runs, (SELECT md5(string_agg(COALESCE(sample_input::text, '-'), '' ORDER BY id)) FROM automations WHERE org_id = $1) AS samples",
        [ids.acme],
      ),
    ).toEqual(before);
  });
});

describe("the web server's own answer to a delivery (apps/web/server.ts, before Next's pipeline)", () => {
  it("answers as the trigger route: the same codes, bodies and security headers; escaped slugs and a query string as Next reads them; a broken escape in words; other methods left to Next", async () => {
    const flow = await publish(d.t.db, bare(), { org: "acme", automation: "web-server" });
    const { signingSecret } = await triggerSettings(d.t.db, ids.acme, flow.automationId, "signed");
    const body = JSON.stringify({ email: "ana@example.com" });
    const first = await post("acme/web-server", body, signed(signingSecret, "msg_web_server_1", body));
    expect(first.status).toBe(202);
    for (const [name, value] of [["x-frame-options", "DENY"], ["x-content-type-options", "nosniff"], ["referrer-policy", "same-origin"]] as const) {
      expect(first.headers.get(name), name).toBe(value);
    }
    expect(first.headers.get("content-type")).toMatch(/^application\/json/);
    const { runId } = (await first.json()) as { runId: string; duplicate: boolean };
    // The same delivery again, by the escaped slug and with a query string: one route, one run, answered as a repeat.
    const again = await post("%61cme/web-server?utm_source=crm", body, signed(signingSecret, "msg_web_server_1", body));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ runId, duplicate: true });
    const forged = await post("acme/web-server", body, { ...signed(signingSecret, "msg_web_server_2", body), "webhook-signature": "v1,AAAA" });
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe("invalid_signature");
    expect((await post("nobody/web-server", body, signed(signingSecret, "msg_web_server_3", body))).status).toBe(404);
    // Not POST: the Next route's 405, naming the one method a trigger URL takes.
    const get = await fetch(`${d.web.base}/api/hooks/acme/web-server`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    // A broken %-escape names nothing: said in words, not a server error.
    const broken = await post("%E0%A4%A/web-server", body);
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: { message: string } }).error.message).toMatch(/broken %-escape: copy it again/);
    expect(await q("SELECT count(*)::int AS n FROM runs WHERE automation_id = $1", [flow.automationId])).toEqual([{ n: 1 }]);
  });
});
