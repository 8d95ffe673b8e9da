import { randomBytes } from "node:crypto";
import { demoGraph, ensurePublished } from "@holdfast/cli/seed";
import type { Logger } from "@holdfast/core/base";
import { createAutomation, parseGraph, rotateTriggerCredential, triggerSettings } from "@holdfast/core/versions";
import { signPayload } from "@holdfast/core/run";
import { createDb, type Db } from "@holdfast/db";
import { createTestDatabase, startTcpProxy, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleHook } from "../src/server/hooks";

// This file's own database, cloned from the migrated template (packages/testkit).
let secret: string;
/** URL tokens of the url_token-mode automations: `hook()` calls them at their token URL. */
const tokens = new Map<string, string>();
const silentLog = { error() {} } as unknown as Logger;

let t: TestDatabase;
let db: Db;

beforeAll(async () => {
  t = await createTestDatabase();
  db = t.db;
  await ensurePublished(db, {
    orgSlug: "demo",
    orgName: "Demo",
    automationSlug: "demo-follow-up",
    automationName: "Demo follow-up",
    graph: demoGraph("http://127.0.0.1:9/echo"),
    triggerAuth: "url_token",
  });
  const bare = (trigger: Record<string, unknown>) =>
    parseGraph({
      nodes: [
        { id: "start", kind: "trigger", config: trigger },
        { id: "done", kind: "end" },
      ],
      edges: [{ from: "start", to: "done" }],
    });
  await ensurePublished(db, {
    orgSlug: "demo",
    orgName: "Demo",
    automationSlug: "signed",
    automationName: "Signed",
    graph: bare({ eventIdField: "id" }),
  });
  await ensurePublished(db, {
    orgSlug: "demo",
    orgName: "Demo",
    automationSlug: "no-key",
    automationName: "No event id field",
    graph: bare({}),
    triggerAuth: "url_token",
  });
  const org = await db.organisation.findUniqueOrThrow({ where: { slug: "demo" } });
  await db.$transaction((tx) => createAutomation(tx, { orgId: org.id, slug: "draft", name: "Never published", triggerAuth: "url_token" }));
  for (const a of await db.automation.findMany({ where: { orgId: org.id } })) {
    const settings = await triggerSettings(db, org.id, a.id, a.triggerAuth as "signed" | "url_token");
    if (a.slug === "signed") secret = settings.signingSecret;
    if (a.triggerAuth === "url_token") tokens.set(a.slug, settings.urlToken);
  }
}, 60_000);

afterAll(async () => {
  await t?.drop();
});

function post(path: string, body: string, headers: Record<string, string> = {}): Request {
  return new Request(`http://localhost/api/hooks/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

/** Either body the endpoint answers with; tests read whichever fields the case expects. */
interface HookBody {
  runId?: string;
  duplicate?: boolean;
  error?: { code: string; message: string };
}

interface HookResult {
  status: number;
  type: string | null;
  json: HookBody;
}

async function hook(org: string, automation: string, request: Request, token = tokens.get(automation)): Promise<HookResult> {
  const params = { orgSlug: org, automationSlug: automation, ...(token !== undefined ? { token } : {}) };
  const response = await handleHook(db, params, request, { log: silentLog });
  const text = await response.text();
  return { status: response.status, type: response.headers.get("content-type"), json: JSON.parse(text) as HookBody };
}

async function counts() {
  const [runs, outbox, events] = await Promise.all([db.run.count(), db.outbox.count(), db.runEvent.count()]);
  return { runs, outbox, events };
}

function signed(body: string, id: string, at = Math.floor(Date.now() / 1000), key = secret) {
  return { "webhook-id": id, "webhook-timestamp": String(at), "webhook-signature": signPayload(key, id, at, body) };
}

/** Asserts that `fn` answers `status` with error `code` and leaves runs, outbox and run_events untouched. */
async function refused(status: number, code: string, fn: () => Promise<HookResult>) {
  const before = await counts();
  const res = await fn();
  expect(res.status).toBe(status);
  expect(res.type).toContain("application/json");
  expect(res.json.error?.code).toBe(code);
  expect(typeof res.json.error?.message).toBe("string");
  expect(await counts()).toEqual(before);
  return res;
}

describe("POST /api/hooks/:org/:automation", () => {
  const body = JSON.stringify({ id: "evt_first", plan: "pro", email: "maya@example.com" });

  it("starts one run on the first delivery, with its first walk: one outbox row (the first step's) and its timeline", async () => {
    const before = await counts();
    const res = await hook("demo", "demo-follow-up", post("demo/demo-follow-up", body, { "webhook-id": "evt_first" }));
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ runId: expect.stringMatching(/^run_/), duplicate: false });

    const run = await db.run.findUniqueOrThrow({ where: { id: res.json.runId } });
    expect(run.status).toBe("running");
    expect(run.input).toEqual(JSON.parse(body));
    const outbox = await db.outbox.findMany({ where: { runId: run.id } });
    expect(outbox.map((o) => o.topic)).toEqual(["step.ready"]);
    const events = await db.runEvent.findMany({ where: { runId: run.id }, orderBy: { id: "asc" } });
    expect(events[0]?.type).toBe("run.started");
    expect(events.filter((e) => e.type === "step.scheduled")).toHaveLength(1);
    expect(await counts()).toEqual({ runs: before.runs + 1, outbox: before.outbox + 1, events: before.events + events.length });
  });

  it("answers a repeated delivery with the same run and no second outbox row", async () => {
    const first = await hook("demo", "demo-follow-up", post("demo/demo-follow-up", body, { "webhook-id": "evt_repeat" }));
    expect(first.status).toBe(202);
    const before = await counts();
    const again = await hook("demo", "demo-follow-up", post("demo/demo-follow-up", body, { "webhook-id": "evt_repeat" }));
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ runId: first.json.runId, duplicate: true });
    const after = await counts();
    expect(after.runs).toBe(before.runs);
    expect(after.outbox).toBe(before.outbox);
    expect(await db.outbox.count({ where: { runId: first.json.runId } })).toBe(1);
    const types = (await db.runEvent.findMany({ where: { runId: first.json.runId }, orderBy: { id: "asc" } })).map((e) => e.type);
    expect(types[0]).toBe("run.started");
    expect(types.at(-1)).toBe("run.duplicate_start");
    expect(types.filter((t) => t === "run.started" || t === "run.duplicate_start")).toHaveLength(2);
  });

  it("uses the trigger's eventIdField when no webhook-id header is sent", async () => {
    const payload = JSON.stringify({ id: "evt_from_body", plan: "free" });
    const first = await hook("demo", "demo-follow-up", post("demo/demo-follow-up", payload));
    expect(first.status).toBe(202);
    const run = await db.run.findUniqueOrThrow({ where: { id: first.json.runId } });
    expect(run.startKey).toMatch(/:ev:evt_from_body$/);
    const again = await hook("demo", "demo-follow-up", post("demo/demo-follow-up", payload));
    expect(again).toMatchObject({ status: 200, json: { runId: first.json.runId, duplicate: true } });
  });

  it("refuses malformed JSON with 400 and writes nothing", async () => {
    await refused(400, "invalid_json", () =>
      hook("demo", "demo-follow-up", post("demo/demo-follow-up", '{"id": "evt_bad",', { "webhook-id": "evt_bad" })),
    );
  });

  it("refuses text the database cannot store (U+0000, unpaired surrogates) with 400 instead of failing with 500", async () => {
    for (const text of ['{"id":"evt_nul","note":"a\\u0000b"}', '{"id":"evt_sur","note":"\\ud800"}']) {
      await refused(400, "invalid_payload", () => hook("demo", "demo-follow-up", post("demo/demo-follow-up", text, { "webhook-id": "evt_nul" })));
    }
  });

  it("refuses JSON that is not an object with 400", async () => {
    for (const text of ["[1,2]", '"text"', "42", "null"]) {
      await refused(400, "invalid_payload", () =>
        hook("demo", "demo-follow-up", post("demo/demo-follow-up", text, { "webhook-id": "evt_scalar" })),
      );
    }
  });

  it("answers 404 for an unknown organisation or automation, and for slugs that cannot exist", async () => {
    await refused(404, "org_not_found", () => hook("nobody", "demo-follow-up", post("nobody/demo-follow-up", body, { "webhook-id": "e1" })));
    await refused(404, "automation_not_found", () => hook("demo", "missing", post("demo/missing", body, { "webhook-id": "e1" })));
    await refused(404, "org_not_found", () => hook("Demo!", "demo-follow-up", post("x/y", body, { "webhook-id": "e1" })));
    await refused(404, "automation_not_found", () => hook("demo", "a".repeat(80), post("x/y", body, { "webhook-id": "e1" })));
  });

  it("answers 409 for an automation without a published version", async () => {
    const res = await refused(409, "no_published_version", () => hook("demo", "draft", post("demo/draft", body, { "webhook-id": "e1" })));
    expect(res.json.error?.message).toMatch(/is a draft: publish it first/);
  });

  it("refuses bodies over the limit with 413, by Content-Length and by the bytes actually sent", async () => {
    const big = JSON.stringify({ id: "evt_big", pad: "x".repeat(262_144) });
    await refused(413, "payload_too_large", () =>
      hook("demo", "demo-follow-up", post("demo/demo-follow-up", big, { "webhook-id": "evt_big" })),
    );
    // No Content-Length at all: a streamed body.
    const streamed = () =>
      new Request("http://localhost/api/hooks/demo/demo-follow-up", {
        method: "POST",
        headers: { "content-type": "application/json", "webhook-id": "evt_big" },
        body: new ReadableStream({
          start(controller) {
            for (let i = 0; i < 40; i++) controller.enqueue(new TextEncoder().encode("x".repeat(8_192)));
            controller.close();
          },
        }),
        duplex: "half",
      } as RequestInit);
    await refused(413, "payload_too_large", () => hook("demo", "demo-follow-up", streamed()));
    // A Content-Length that understates the body.
    const lying = post("demo/demo-follow-up", big, { "webhook-id": "evt_big", "content-length": "10" });
    await refused(413, "payload_too_large", () => hook("demo", "demo-follow-up", lying));
    // Just under the limit is accepted.
    const fits = JSON.stringify({ id: "evt_fits", pad: "x".repeat(200_000) });
    expect((await hook("demo", "demo-follow-up", post("demo/demo-follow-up", fits))).status).toBe(202);
  });

  it("starts a form tool's post without webhook-id or id field: an identical one within the window is the same run", async () => {
    const first = await hook("demo", "no-key", post("demo/no-key", JSON.stringify({ plan: "pro" })));
    expect(first.status).toBe(202);
    const again = await hook("demo", "no-key", post("demo/no-key", JSON.stringify({ plan: "pro" })));
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ runId: first.json.runId, duplicate: true });
    const ok = await hook("demo", "no-key", post("demo/no-key", JSON.stringify({ plan: "pro" }), { "webhook-id": "evt_nk" }));
    expect(ok.status).toBe(202);
  });

  describe("signed triggers", () => {
    const payload = JSON.stringify({ id: "evt_signed", amount: 12 });

    it("accepts a valid signature", async () => {
      const res = await hook("demo", "signed", post("demo/signed", payload, signed(payload, "msg_valid")));
      expect(res.status).toBe(202);
      expect(res.json.duplicate).toBe(false);
    });

    it("refuses a bad signature with 401", async () => {
      const other = `whsec_${randomBytes(32).toString("base64")}`;
      await refused(401, "invalid_signature", () =>
        hook("demo", "signed", post("demo/signed", payload, signed(payload, "msg_bad", undefined, other))),
      );
      // Signed over a different body.
      const headers = signed(JSON.stringify({ id: "evt_signed", amount: 13 }), "msg_bad2");
      await refused(401, "invalid_signature", () => hook("demo", "signed", post("demo/signed", payload, headers)));
    });

    it("refuses a timestamp six minutes old with 401", async () => {
      const old = Math.floor(Date.now() / 1000) - 6 * 60;
      await refused(401, "invalid_signature", () => hook("demo", "signed", post("demo/signed", payload, signed(payload, "msg_old", old))));
    });

    it("accepts two space-separated signatures when only the second is valid", async () => {
      const other = `whsec_${randomBytes(32).toString("base64")}`;
      const good = signed(payload, "msg_two");
      const bad = signed(payload, "msg_two", Number(good["webhook-timestamp"]), other);
      const headers = { ...good, "webhook-signature": `${bad["webhook-signature"]} ${good["webhook-signature"]}` };
      const res = await hook("demo", "signed", post("demo/signed", payload, headers));
      expect(res.status).toBe(202);
    });

    it("refuses a request without the signature headers with 401", async () => {
      await refused(401, "invalid_signature", () => hook("demo", "signed", post("demo/signed", payload)));
      const { "webhook-signature": _, ...noSignature } = signed(payload, "msg_nosig");
      await refused(401, "invalid_signature", () => hook("demo", "signed", post("demo/signed", payload, noSignature)));
    });
  });

  describe("every trigger is authenticated", () => {
    const payload = JSON.stringify({ id: "evt_auth", plan: "free" });

    it("refuses an unsigned start on a signed trigger (the default for every new automation)", async () => {
      const org = await db.organisation.findUniqueOrThrow({ where: { slug: "demo" } });
      await db.$transaction((tx) => createAutomation(tx, { orgId: org.id, slug: "fresh", name: "Fresh" }));
      await ensurePublished(db, { orgSlug: "demo", orgName: "Demo", automationSlug: "fresh", automationName: "Fresh", graph: demoGraph("http://127.0.0.1:9/") });
      await refused(401, "invalid_signature", () => hook("demo", "fresh", post("demo/fresh", payload, { "webhook-id": "evt_u" })));
      // A token in the URL does not open a signed trigger either.
      const fresh = await db.automation.findFirstOrThrow({ where: { slug: "fresh" } });
      const { urlToken } = await triggerSettings(db, org.id, fresh.id, "signed");
      await refused(401, "invalid_signature", () => hook("demo", "fresh", post("demo/fresh", payload, { "webhook-id": "evt_u" }), urlToken));
    });

    it("url_token mode: the right token starts, a wrong or missing one is refused with 401 and nothing written", async () => {
      await refused(401, "invalid_signature", () => hook("demo", "demo-follow-up", post("demo/demo-follow-up", payload), "x".repeat(43)));
      await refused(401, "invalid_signature", () => hook("demo", "demo-follow-up", post("demo/demo-follow-up", payload), ""));
      const base = await handleHook(db, { orgSlug: "demo", automationSlug: "demo-follow-up" }, post("demo/demo-follow-up", payload), { log: silentLog });
      expect(base.status).toBe(401);
      expect((await hook("demo", "demo-follow-up", post("demo/demo-follow-up", payload))).status).toBe(202);
    });

    it("a rotated credential stays accepted for the overlap, then is refused", async () => {
      const org = await db.organisation.findUniqueOrThrow({ where: { slug: "demo" } });
      const a = await db.automation.findFirstOrThrow({ where: { slug: "demo-follow-up" } });
      const old = tokens.get("demo-follow-up") as string;
      const fresh = await rotateTriggerCredential(db, org.id, a.id, "url_token");
      expect(fresh).not.toBe(old);
      const one = JSON.stringify({ id: "evt_rot_1" });
      expect((await hook("demo", "demo-follow-up", post("demo/demo-follow-up", one), old)).status).toBe(202);
      expect((await hook("demo", "demo-follow-up", post("demo/demo-follow-up", JSON.stringify({ id: "evt_rot_2" })), fresh)).status).toBe(202);
      const [retired] = await db.$queryRaw<{ expiresIn: number }[]>`
        SELECT EXTRACT(EPOCH FROM expires_at - now())::float8 AS "expiresIn" FROM trigger_credentials WHERE automation_id = ${a.id} AND secret = ${old}`;
      expect(retired?.expiresIn).toBeGreaterThan(23.9 * 3600);
      expect(retired?.expiresIn).toBeLessThanOrEqual(24 * 3600);
      // The overlap ends (by the database clock): the old token is refused, the new one works.
      await db.$executeRaw`UPDATE trigger_credentials SET expires_at = now() - interval '1 second' WHERE automation_id = ${a.id} AND secret = ${old}`;
      await refused(401, "invalid_signature", () => hook("demo", "demo-follow-up", post("demo/demo-follow-up", JSON.stringify({ id: "evt_rot_3" })), old));
      expect((await hook("demo", "demo-follow-up", post("demo/demo-follow-up", JSON.stringify({ id: "evt_rot_4" })), fresh)).status).toBe(202);
      tokens.set("demo-follow-up", fresh);

      // Signing secrets rotate the same way.
      const s = await db.automation.findFirstOrThrow({ where: { slug: "signed" } });
      const oldSecret = secret;
      const newSecret = await rotateTriggerCredential(db, org.id, s.id, "signing_secret");
      const body = JSON.stringify({ id: "evt_rot_s" });
      expect((await hook("demo", "signed", post("demo/signed", body, signed(body, "msg_rot_old", undefined, oldSecret)))).status).toBe(202);
      expect((await hook("demo", "signed", post("demo/signed", body, signed(body, "msg_rot_new", undefined, newSecret)))).status).toBe(202);
    });
  });

  describe("form posts (application/x-www-form-urlencoded)", () => {
    const form = (path: string, body: string, headers: Record<string, string> = {}) =>
      new Request(`http://localhost/api/hooks/${path}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded; charset=UTF-8", ...headers },
        body,
      });

    it("starts a run with the fields as the input; a repeated field becomes a list", async () => {
      const body = "id=form_1&email=maya%40example.com&plan=pro&interest=crm&interest=email&note=hello+world";
      const res = await hook("demo", "demo-follow-up", form("demo/demo-follow-up", body));
      expect(res.status).toBe(202);
      const run = await db.run.findUniqueOrThrow({ where: { id: res.json.runId as string } });
      expect(run.input).toEqual({ id: "form_1", email: "maya@example.com", plan: "pro", interest: ["crm", "email"], note: "hello world" });
      expect(run.startKey).toMatch(/:ev:form_1$/);
    });

    it("is signed over its raw bytes like JSON; a field named __proto__ is dropped", async () => {
      const body = "id=form_signed&__proto__=x&amount=12";
      const res = await hook("demo", "signed", form("demo/signed", body, signed(body, "msg_form")));
      expect(res.status).toBe(202);
      const run = await db.run.findUniqueOrThrow({ where: { id: res.json.runId as string } });
      expect(run.input).toEqual({ id: "form_signed", amount: "12" });
      await refused(401, "invalid_signature", () => hook("demo", "signed", form("demo/signed", "id=form_forged", signed(body, "msg_form2"))));
    });

    it("a body that is neither JSON nor a form is refused with a sentence naming both", async () => {
      const res = await refused(400, "invalid_json", () =>
        hook("demo", "demo-follow-up", post("demo/demo-follow-up", "id=x&y=z", { "content-type": "text/plain" })),
      );
      expect(res.json.error?.message).toMatch(/application\/x-www-form-urlencoded/);
    });
  });
});

describe("while the database cannot be reached", () => {
  it("answers 503 with Retry-After (not 500) and reports the outage once per request; back: the sender's retry is accepted", async () => {
    const u = new URL(t.url);
    const proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
    const behind = createDb(proxy.urlFor(t.url), { poolSize: 2, onConnectionError: () => {} });
    const reported: unknown[] = [];
    const outages = { report: (e: unknown) => reported.push(e) > 0, whenUp: async () => {} };
    const send = () =>
      handleHook(
        behind,
        { orgSlug: "demo", automationSlug: "demo-follow-up", token: tokens.get("demo-follow-up") as string },
        post("demo/demo-follow-up", JSON.stringify({ id: "evt_outage", plan: "pro" }), { "webhook-id": "evt_outage" }),
        { log: silentLog, outages },
      );
    try {
      await behind.$queryRawUnsafe("SELECT 1"); // a pooled connection the cut resets
      const before = await counts();
      await proxy.cut();
      const refused = await send();
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("30");
      expect(((await refused.json()) as HookBody).error?.code).toBe("database_unavailable");
      expect(reported).toHaveLength(1);
      await proxy.restore();
      expect(await counts()).toEqual(before);
      const accepted = await send();
      expect(accepted.status).toBe(202);
    } finally {
      await behind.$disconnect();
      await proxy.close();
    }
  });
});
