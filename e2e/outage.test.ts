import { triggerSettings } from "@holdfast/core/versions";
import {
  type AppProcess,
  addMember,
  fetchAgain,
  type HttpTarget,
  httpChainGraph,
  mailInPort,
  publish,
  sessionCookieFor,
  slackInteraction,
  spawnApp,
  startHttpTarget,
  startTcpProxy,
  startTestDeployment,
  type TcpProxy,
  type TestDeployment,
  testPassword,
  testRedisUrl,
  waitFor,
} from "@holdfast/testkit";
import nodemailer from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Outages answered honestly (issue 17, item 2). Every process (web, relay, engine, io lane worker, sweeper, mail-in)
 * reaches PostgreSQL and Redis through a TCP proxy this file cuts and restores; the machine's services keep running
 * for the other test files. While the database is cut, a delivery is answered 503 with Retry-After, the inbox and a
 * run page say the service is unavailable; once it is back, the same processes (never restarted) take the sender's
 * retry and complete its run. Redis is cut and this file's keys flushed while a run waits on a timer: the sweeper
 * recovers the lost wake-ups and both runs complete. Each process logs one line when a service goes and one when it
 * is back, and nothing else about it.
 */
let d: TestDeployment;
let target: HttpTarget;
let pgProxy: TcpProxy;
let redisProxy: TcpProxy;
let apps: AppProcess[] = [];
let mailInPortNumber = 0;
let hookUrl = "";
let laterUrl = "";
let cookie = "";
const inboundToken = "inbound-token-for-the-outage-test";
const slackSecret = "slack-signing-secret-for-the-outage-test";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
/** Every process's settings: the database and Redis through the proxies this file cuts. */
const proxiedEnv = () => d.quickEnv({ DATABASE_URL: pgProxy.urlFor(d.t.url), REDIS_URL: redisProxy.urlFor(testRedisUrl), LOG_LEVEL: "info" });

beforeAll(async () => {
  d = await startTestDeployment();
  target = d.closeAtStop(await startHttpTarget());
  const db = new URL(d.t.url);
  pgProxy = d.closeAtStop(await startTcpProxy({ host: db.hostname, port: Number(db.port || 5432) }));
  const redis = new URL(testRedisUrl);
  redisProxy = d.closeAtStop(await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) }));
  // trigger -> call_1 -> wait 1 s (a timer: the engine's fast path, the sweeper's due sweep) -> call_2 -> end
  const { orgId, automationId } = await publish(d.t.db, httpChainGraph(target.url, 2, { pauseSeconds: 1 }), { automation: "orders", triggerAuth: "url_token" });
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "editor");
  cookie = await sessionCookieFor(d.t.db, "sam@acme.test", testPassword);
  const env = proxiedEnv();
  await d.startWeb({ DATABASE_URL: env.DATABASE_URL as string, REDIS_URL: env.REDIS_URL as string, INBOUND_EMAIL_TOKEN: inboundToken, SLACK_SIGNING_SECRET: slackSecret });
  hookUrl = `${d.web.base}/api/hooks/acme/orders/${(await triggerSettings(d.t.db, orgId, automationId, "url_token")).urlToken}`;
  // The same with a 4 s wait: long enough that its timer's delayed job is in Redis when Redis goes.
  const later = await publish(d.t.db, httpChainGraph(target.url, 2, { pauseSeconds: 4 }), { automation: "later", triggerAuth: "url_token" });
  laterUrl = `${d.web.base}/api/hooks/acme/later/${(await triggerSettings(d.t.db, orgId, later.automationId, "url_token")).urlToken}`;
  apps = await d.startApps(
    [{ app: "relay", env }, { app: "engine", env }, { app: "lane-worker", env: { ...env, LANE: "io" } }, { app: "sweeper", env }, { app: "mail-in", env: { ...env, INBOUND_SMTP_PORT: "0" } }],
    60_000,
  );
  mailInPortNumber = mailInPort(d.app("mail-in"));
});

afterAll(async () => d?.stop());

const deliver = (id: string, url = hookUrl) => fetchAgain(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id }) });
const completed = (runId: string) =>
  waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status === "completed", 60_000, `run ${runId} to complete`);
const mail = (subject: string) =>
  nodemailer
    .createTransport({ host: "127.0.0.1", port: mailInPortNumber, secure: false, ignoreTLS: true })
    .sendMail({ from: "lena@example.com", to: "reply+acme@127.0.0.1", subject, text: "Tuesday works." });

/** Every process's log as text, by name (the web's included). */
const logs = (): Record<string, string> => ({ web: d.web.log(), ...Object.fromEntries(apps.map((a) => [a.name, a.output()])) });
/** The JSON log lines each process wrote after `marks` was taken. */
function linesSince(marks: Record<string, number>): Record<string, Record<string, unknown>[]> {
  return Object.fromEntries(
    Object.entries(logs()).map(([name, text]) => [
      name,
      text
        .slice(marks[name] ?? 0)
        .split("\n")
        .flatMap((line) => {
          try {
            const o = JSON.parse(line) as unknown;
            return o && typeof o === "object" ? [o as Record<string, unknown>] : [];
          } catch {
            return [];
          }
        }),
    ]),
  );
}
const mark = () => Object.fromEntries(Object.entries(logs()).map(([name, text]) => [name, text.length]));
const said = (lines: Record<string, unknown>[], service: string, outage: "down" | "up") => lines.filter((l) => l.service === service && l.outage === outage).length;
/** Waits until each named process has logged `outage` for `service`. */
const everyoneSaid = (marks: Record<string, number>, names: string[], service: string, outage: "down" | "up") =>
  waitFor(async () => names.every((n) => said(linesSince(marks)[n] ?? [], service, outage) > 0), 30_000, `${names.join(", ")} to log ${service} ${outage}`);

describe("the database goes away and comes back", () => {
  it("503 with Retry-After, plain words on the inbox and run page; back: the sender's retry runs to completion; one line each way per process", async () => {
    const before = await deliver("order-0");
    expect(before.status).toBe(202);
    const { runId: firstRun } = (await before.json()) as { runId: string };
    await completed(firstRun);
    expect(await mail("before")).toMatchObject({ accepted: ["reply+acme@127.0.0.1"] });

    const marks = mark();
    const cutAt = Date.now();
    await pgProxy.cut();

    const refused = await deliver("order-1");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(await refused.json()).toEqual({
      error: { code: "database_unavailable", message: expect.stringMatching(/cannot reach its database right now: send this delivery again later/) },
    });
    // A burst of refused deliveries is still one line in the web's log, not one per request.
    for (const r of await Promise.all(Array.from({ length: 20 }, () => deliver("order-1")))) expect(r.status).toBe(503);

    for (const path of ["/approvals", `/runs/${firstRun}`, "/", "/automations", "/settings"]) {
      const page = await fetchAgain(`${d.web.base}${path}`, { headers: { cookie } });
      const html = await page.text();
      expect(html, path).toContain("Holdfast is unavailable right now");
      expect(html, path).toContain("It cannot reach its database, so this page cannot be shown.");
      expect(html, path).not.toMatch(/Application error|Internal Server Error|This page couldn.t load/);
    }
    // The editor's and settings' API: SERVICE_UNAVAILABLE in words, not an internal error.
    const input = encodeURIComponent(JSON.stringify({ json: { orgSlug: "acme" } }));
    const api = await fetchAgain(`${d.web.base}/api/trpc/automations.list?input=${input}`, { headers: { cookie } });
    expect(api.status).toBe(503);
    expect(await api.text()).toContain("Holdfast is busy; your change is kept and will be saved. Try again in a moment.");
    // The other doors: sign-in, the inbound-email webhook, a Slack click, Add to Slack's return. Each says the
    // database is unreachable and when to try again (503 + Retry-After), or goes back to Settings saying so.
    const doors: [string, Promise<Response>][] = [
      ["sign-in", fetchAgain(`${d.web.base}/api/auth/sign-in`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "sam@acme.test", password: "correct horse battery" }) })],
      ["inbound email", fetchAgain(`${d.web.base}/api/signals/email?org=acme`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${inboundToken}` },
        body: JSON.stringify({ messageId: "<r1@example.com>", from: "lena@example.com", to: "reply+acme@example.com", text: "Tuesday works." }),
      })],
      ["slack click", (async () => {
        const click = slackInteraction(slackSecret, { teamId: "T0ACME", userId: "U0SAM", channel: "C0A", ts: "1.2", actionId: "approve", value: "x" });
        return fetchAgain(`${d.web.base}/api/slack/interactions`, { method: "POST", headers: click.headers, body: click.body });
      })()],
    ];
    for (const [door, answer] of doors) {
      const res = await answer;
      const body = (await res.json()) as { error?: { code?: string; message?: string } };
      expect({ door, status: res.status, retryAfter: res.headers.get("retry-after"), code: body.error?.code }).toEqual({ door, status: 503, retryAfter: "30", code: "database_unavailable" });
      expect(body.error?.message, door).toMatch(/cannot reach its database right now/);
    }
    const oauth = await fetchAgain(`${d.web.base}/api/slack/oauth?code=c&state=s`, { headers: { cookie }, redirect: "manual" });
    expect(oauth.status).toBe(303);
    expect(new URL(oauth.headers.get("location") ?? "", d.web.base).searchParams.get("slack_error")).toMatch(/^Holdfast cannot reach its database right now, so Slack was not added/);

    // mail-in answers 451 (try again later): the sending server keeps the message.
    await expect(mail("during")).rejects.toMatchObject({ responseCode: 451 });

    const everyone = ["web", "relay", "engine", "lane-worker", "sweeper", "mail-in"];
    await everyoneSaid(marks, everyone, "database", "down");
    // Longer than several checks and loop iterations: still one line.
    await new Promise((r) => setTimeout(r, 3_000));
    await pgProxy.restore();
    const outageMs = Date.now() - cutAt;

    // The sender retries the refused delivery: accepted and completed by the same processes, none restarted.
    const retried = await waitFor(async () => {
      const r = await deliver("order-1");
      return r.status === 202 ? r : undefined;
    }, 30_000, "the retried delivery to be accepted");
    const { runId } = (await retried.json()) as { runId: string };
    await completed(runId);
    expect(await mail("after")).toMatchObject({ accepted: ["reply+acme@127.0.0.1"] });
    const page = await (await fetchAgain(`${d.web.base}/runs/${runId}`, { headers: { cookie } })).text();
    expect(page).not.toContain("Holdfast is unavailable right now");
    await everyoneSaid(marks, everyone, "database", "up");

    const lines = linesSince(marks);
    const figures = Object.fromEntries(everyone.map((n) => [n, { down: said(lines[n] ?? [], "database", "down"), up: said(lines[n] ?? [], "database", "up") }]));
    console.log(`database outage of ${outageMs} ms, outage lines per process: ${JSON.stringify(figures)}`);
    for (const n of everyone) for (const l of lines[n] ?? []) if (l.outage) console.log(`  ${n}: ${l.msg}`);
    for (const n of everyone) expect(figures[n], n).toEqual({ down: 1, up: 1 });
    // Nothing else was logged as a warning or an error about it (no line per failed query, loop or job).
    const noise = Object.entries(lines).flatMap(([n, ls]) => ls.filter((l) => (l.level as number) >= 40 && !l.outage).map((l) => `${n}: ${l.msg}`));
    expect(noise).toEqual([]);
    // Nor did Next print an error of its own (a render that threw, with its digest).
    expect(d.web.log().slice(marks.web)).not.toMatch(/⨯|digest|Error:/);
    for (const a of apps) expect(a.exits, a.name).toEqual([]);
  });
});

describe("Redis goes away, comes back empty", () => {
  it("a run waiting on a timer and a run started during the outage both complete; one line each way in the processes that use Redis", async () => {
    const waiting = (await (await deliver("order-2", laterUrl)).json()) as { runId: string };
    // Its wake-up is a delayed job in Redis now.
    await waitFor(async () => (await q("SELECT 1 FROM timers WHERE run_id = $1 AND fired_at IS NULL", [waiting.runId])).length > 0, 30_000, "the wait's timer");
    const marks = mark();
    await redisProxy.cut();
    await d.clearRedis(); // Redis comes back without this deployment's keys

    // The web needs no Redis to take a delivery: the run starts; its wake-up waits in the outbox.
    const during = await deliver("order-3");
    expect(during.status).toBe(202);
    const { runId } = (await during.json()) as { runId: string };

    const users = ["relay", "engine", "lane-worker"];
    await everyoneSaid(marks, users, "redis", "down");
    await new Promise((r) => setTimeout(r, 2_000));
    await redisProxy.restore();
    await Promise.all([completed(waiting.runId), completed(runId)]);
    await everyoneSaid(marks, users, "redis", "up");

    const lines = linesSince(marks);
    const figures = Object.fromEntries(Object.keys(lines).map((n) => [n, { down: said(lines[n] ?? [], "redis", "down"), up: said(lines[n] ?? [], "redis", "up"), database: said(lines[n] ?? [], "database", "down") }]));
    console.log(`redis outage, outage lines per process: ${JSON.stringify(figures)}`);
    for (const n of users) expect(figures[n], n).toEqual({ down: 1, up: 1, database: 0 });
    for (const n of ["web", "sweeper", "mail-in"]) expect(figures[n], n).toEqual({ down: 0, up: 0, database: 0 });
    // Each call went out once per step (the target counts calls per Idempotency-Key).
    const calls = await q("SELECT count(*)::int AS n FROM steps WHERE run_id = ANY($1) AND status = 'done' AND node_id LIKE 'call_%'", [[waiting.runId, runId]]);
    expect(calls[0]?.n).toBe(4);
    const noise = Object.entries(lines).flatMap(([n, ls]) => ls.filter((l) => (l.level as number) >= 40 && !l.outage).map((l) => `${n}: ${l.msg}`));
    console.log(`other warnings and errors during the redis outage: ${JSON.stringify(noise)}`);
    for (const a of apps) expect(a.exits, a.name).toEqual([]);
  });
});

describe("a process started while the database is unreachable", () => {
  it("waits for the database, saying so once, and starts when it is back instead of exiting (a supervisor's restart in an outage)", async () => {
    await pgProxy.cut();
    const late = spawnApp("lane-worker", { env: { ...proxiedEnv(), LANE: "io" } });
    try {
      await late.waitForOutput(/database not reachable at start-up: waiting for it/, 30_000);
      await new Promise((r) => setTimeout(r, 2_500)); // several retries: still one line, still running
      expect(late.exits).toEqual([]);
      await pgProxy.restore();
      await late.waitForOutput(/lane worker ready/, 30_000);
      expect(late.output().match(/database not reachable at start-up/g)).toHaveLength(1);
      expect(late.output()).toContain("database reachable: starting");
      // It does work: a delivery now completes (either io worker may take its steps).
      const res = await deliver("order-4");
      expect(res.status).toBe(202);
      await completed(((await res.json()) as { runId: string }).runId);
      expect(late.exits).toEqual([]);
    } finally {
      await pgProxy.restore().catch(() => undefined);
      await late.stop();
    }
  });
});
