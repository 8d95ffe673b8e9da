import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { accountKey, upsertMember } from "@holdfast/core/people";
import { sweepOnce } from "@holdfast/core/run";
import { addMember, freePort, startOnlyGraph, publish, startTestDeployment, type TestDeployment, testPassword, type WebServer } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Web hygiene for an internet-facing deployment, against the built web server (apps/web/dist/server.mjs) and a real database:
 * the post-sign-in path never leaves the site, sign-in is throttled per account and per address (429 + Retry-After),
 * sessions rotate, idle out, end on a password change and are purged, cookies are Secure over https, every
 * body-reading route refuses a 100 MB body while streaming (the server's memory stays flat), /metrics and the
 * detailed health need a bearer token. Self-contained: its own database, its own web servers.
 */
let d: TestDeployment;
let web: WebServer;
let bare: WebServer;
let orgId = "";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const password = testPassword;
const metricsToken = "metrics-token-0123456789abcdef";
const inboundToken = "inbound-token-0123456789abcdef";
const windowSeconds = 15;

beforeAll(async () => {
  d = await startTestDeployment();
  ({ orgId } = await publish(d.t.db, startOnlyGraph()));
  for (const who of ["sam", "victim", "pat", "rita", "ivy", "carl"]) await addMember(d.t.db, orgId, `${who}@acme.test`, who, "owner");
  web = await d.startWeb({
    LOG_LEVEL: "warn",
    SIGNIN_MAX_FAILURES_PER_ACCOUNT: "10",
    SIGNIN_MAX_FAILURES_PER_ADDRESS: "20",
    SIGNIN_WINDOW_SECONDS: String(windowSeconds),
    SESSION_IDLE_MINUTES: "30",
    METRICS_TOKEN: metricsToken,
    INBOUND_EMAIL_TOKEN: inboundToken,
    SLACK_SIGNING_SECRET: "slack-signing-secret-for-tests",
    HOLDFAST_DEMO_ECHO: "1",
  });
  // No METRICS_TOKEN, no demo echo, behind a "proxy" (TRUST_PROXY=1), and Redis not answering: not ready.
  bare = await d.startWeb({
    LOG_LEVEL: "warn",
    REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    TRUST_PROXY: "1",
    SIGNIN_MAX_FAILURES_PER_ACCOUNT: "100",
    SIGNIN_MAX_FAILURES_PER_ADDRESS: "3",
    SIGNIN_WINDOW_SECONDS: "60",
  });
}, 300_000);

afterAll(async () => d?.stop());

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  json<T = Record<string, unknown>>(): T;
}

/** One HTTP request from a chosen loopback address (the server sees it as the TCP peer). */
function send(
  server: WebServer,
  path: string,
  o: { method?: string; headers?: Record<string, string>; body?: string; from?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port: server.port, path, method: o.method ?? "GET", headers: o.headers ?? {}, localAddress: o.from ?? "127.0.0.1", agent: false },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) }));
      },
    );
    req.on("error", reject);
    req.end(o.body);
  });
}

const signIn = (server: WebServer, body: Record<string, unknown>, o: { from?: string; headers?: Record<string, string> } = {}) =>
  send(server, "/api/auth/sign-in", {
    method: "POST",
    headers: { "content-type": "application/json", ...o.headers },
    body: JSON.stringify(body),
    ...(o.from ? { from: o.from } : {}),
  });

const cookieOf = (r: Reply) => {
  const set = r.headers["set-cookie"]?.find((c) => c.startsWith("hf_session="));
  return set ? (set.split(";")[0] as string) : undefined;
};

/** 200 when the page renders for this cookie; a redirect to /signin when the session is not valid. */
const pageStatus = async (cookie: string | undefined) => {
  const r = await send(web, "/approvals", { headers: cookie ? { cookie } : {} });
  return r.status === 200 ? "signed_in" : /\/signin/.test(String(r.headers.location)) ? "signed_out" : `status ${r.status}`;
};

const sessionRow = async (cookie: string) =>
  (await q("SELECT * FROM sessions WHERE id = encode(sha256($1::bytea), 'hex')", [cookie.split("=")[1]]))[0] as
    | { id: string; expires_at: Date; idle_expires_at: Date }
    | undefined;

describe("the post-sign-in path", () => {
  const offSite = [
    "//evil.com",
    "/.//evil.com",
    "/..//evil.com",
    "/%2e//evil.com",
    "/%2E%2E//evil.com",
    "/\\evil.com",
    "/%5cevil.com",
    "/%2f/evil.com",
    "/\t/evil.com",
    "/\n/evil.com",
    "https://evil.com",
    "javascript:alert(document.domain)",
  ];

  it("falls back to the inbox for every spelling of another site, through the real sign-in route", async () => {
    for (const next of offSite) {
      const r = await signIn(web, { email: "sam@acme.test", password, next });
      expect(r.status, JSON.stringify(next)).toBe(200);
      expect(r.json().next, JSON.stringify(next)).toBe("/approvals");
    }
    const kept = await signIn(web, { email: "sam@acme.test", password, next: "/runs/run_1?tab=timeline" });
    expect(kept.json().next).toBe("/runs/run_1?tab=timeline");
    // The form (urlencoded) is read the same way.
    const form = await send(web, "/api/auth/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: "sam@acme.test", password, next: "/.//evil.com" }).toString(),
    });
    expect(form.status).toBe(200);
    expect(form.json().next).toBe("/approvals");
  });

  it("the sign-in page carries only a safe path; a browser signing in lands on this site and signs out", async () => {
    const page = await send(web, `/signin?next=${encodeURIComponent("/%2e//evil.com")}`);
    expect(page.status).toBe(200);
    expect(/<input[^>]*name="next"[^>]*>/.exec(page.body)?.[0]).toMatch(/value="\/approvals"/);
    const browser = await d.launchBrowser();
    try {
      const tab = await browser.newPage();
      await tab.goto(`${web.base}/signin?next=${encodeURIComponent("/.//evil.com")}`);
      await tab.fill('input[name="email"]', "carl@acme.test");
      await tab.fill('input[name="password"]', password);
      await tab.click('button[type="submit"]');
      await tab.waitForURL(/\/approvals$/);
      expect(new URL(tab.url()).host).toBe(new URL(web.base).host);
      const carlSessions = () => q("SELECT count(*)::int AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = 'carl@acme.test'");
      expect(await carlSessions()).toEqual([{ n: 1 }]);
      // Signing out (the layout's server action) still ends the session.
      await tab.click('button:has-text("Sign out")');
      await tab.waitForURL(/\/signin$/);
      expect(await carlSessions()).toEqual([{ n: 0 }]);
    } finally {
      await browser.close();
    }
  });

  it("refuses a sign-in posted from another site (login CSRF)", async () => {
    const r = await signIn(web, { email: "sam@acme.test", password }, { headers: { origin: "https://evil.example" } });
    expect(r.status).toBe(403);
    expect(cookieOf(r)).toBeUndefined();
  });
});

describe("sign-in throttling", () => {
  it("30 wrong passwords: 401 ten times, then 429 with Retry-After; the right password from another address works after the window", async () => {
    const attacker = "127.0.0.5";
    const statuses: number[] = [];
    let firstRefusal: Reply | undefined;
    let lastRefusal: Reply | undefined;
    for (let i = 0; i < 30; i++) {
      const r = await signIn(web, { email: "victim@acme.test", password: `guess ${i}` }, { from: attacker });
      statuses.push(r.status);
      if (r.status === 429) {
        firstRefusal ??= r;
        lastRefusal = r;
        const retryAfter = Number(r.headers["retry-after"]);
        expect(Number.isInteger(retryAfter)).toBe(true);
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
      }
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(20).fill(429));
    // The account ran out first; then the address (10 failures + 10 refused attempts = its 20).
    expect(firstRefusal?.json()).toMatchObject({
      error: { code: "too_many_attempts", scope: "account", message: expect.stringMatching(/^Too many sign-in attempts for this account\. Try again in \d+ seconds?\.$/) },
    });
    expect(lastRefusal?.json()).toMatchObject({ error: { scope: "address", message: expect.stringMatching(/^Too many sign-in attempts from your network address\./) } });

    // The right password, from another address, while the account is blocked: still refused (the guesser could be anyone).
    const early = await signIn(web, { email: "victim@acme.test", password }, { from: "127.0.0.6" });
    expect(early.status).toBe(429);
    expect(cookieOf(early)).toBeUndefined();
    // The attacker's address is blocked for other accounts too, whatever X-Forwarded-For it claims.
    const spoofed = await signIn(web, { email: "rita@acme.test", password }, { from: attacker, headers: { "x-forwarded-for": "198.51.100.77" } });
    expect(spoofed.status).toBe(429);
    expect(spoofed.json()).toMatchObject({ error: { scope: "address" } });
    // Another address is not blocked for other accounts.
    expect((await signIn(web, { email: "rita@acme.test", password }, { from: "127.0.0.6" })).status).toBe(200);

    await new Promise((r) => setTimeout(r, (Number(early.headers["retry-after"]) + 1) * 1000));
    const later = await signIn(web, { email: "victim@acme.test", password }, { from: "127.0.0.6" });
    expect(later.status).toBe(200);
    expect(cookieOf(later)).toBeDefined();
    expect(await pageStatus(cookieOf(later))).toBe("signed_in");
    // The counters, in the table the migration made: every attempt from the attacker's address counted (30 + the
    // spoofed one), and the account's count cleared by the successful sign-in.
    expect(await q("SELECT points FROM signin_throttle WHERE key = 'address:127.0.0.5'")).toEqual([{ points: 31 }]);
    expect(await q("SELECT points FROM signin_throttle WHERE key = $1", [`account:${accountKey("victim@acme.test")}`])).toEqual([]);
  }, 120_000);

  it("the form says why in plain words", async () => {
    const browser = await d.launchBrowser();
    try {
      // The form is ready before the failures, so the click lands well inside the throttle's window on a slow machine.
      const tab = await browser.newPage();
      await tab.goto(`${web.base}/signin`);
      await tab.fill('input[name="email"]', "pat@acme.test");
      await tab.fill('input[name="password"]', password);
      for (let i = 0; i < 10; i++) expect((await signIn(web, { email: "pat@acme.test", password: "nope" }, { from: "127.0.0.8" })).status).toBe(401);
      await tab.click('button[type="submit"]');
      const alert = tab.locator("p.flash-error");
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/^Too many sign-in attempts for this account\. Try again in \d+ seconds?\.$/);
      await tab.fill('input[name="email"]', "ivy@acme.test");
      await tab.fill('input[name="password"]', "wrong password");
      await tab.click('button[type="submit"]');
      await tab.waitForSelector("text=That email and password do not match an account.");
    } finally {
      await browser.close();
    }
  });

  it("behind a trusted proxy (TRUST_PROXY=1) the address is the proxy's last X-Forwarded-For entry", async () => {
    const via = (client: string) => ({ headers: { "x-forwarded-for": `10.9.9.9, ${client}` } });
    for (let i = 0; i < 3; i++) expect((await signIn(bare, { email: `nobody${i}@acme.test`, password: "x" }, via("203.0.113.9"))).status).toBe(401);
    const blocked = await signIn(bare, { email: "sam@acme.test", password }, via("203.0.113.9"));
    expect(blocked.status).toBe(429);
    expect(blocked.json()).toMatchObject({ error: { scope: "address" } });
    // The same TCP peer, another client address behind the proxy: not blocked.
    expect((await signIn(bare, { email: "sam@acme.test", password }, via("203.0.113.10"))).status).toBe(200);
  });
});

describe("sessions through the web", () => {
  it("rotate at sign-in: the request's previous session is deleted", async () => {
    const a = cookieOf(await signIn(web, { email: "ivy@acme.test", password }));
    expect(await pageStatus(a)).toBe("signed_in");
    const b = cookieOf(await signIn(web, { email: "ivy@acme.test", password }, { headers: { cookie: a ?? "" } }));
    expect(b).toBeDefined();
    expect(b).not.toBe(a);
    expect(await sessionRow(a ?? "")).toBeUndefined();
    expect(await pageStatus(a)).toBe("signed_out");
    expect(await pageStatus(b)).toBe("signed_in");
  });

  it("idle out (time moved in SQL), and use pushes the idle expiry forward", async () => {
    const c = cookieOf(await signIn(web, { email: "ivy@acme.test", password })) ?? "";
    const row = await sessionRow(c);
    const [{ idle }] = await q("SELECT extract(epoch FROM idle_expires_at - created_at)::int AS idle FROM sessions WHERE id = $1", [row?.id]);
    expect(idle).toBe(30 * 60); // SESSION_IDLE_MINUTES=30
    // 25 minutes idle: still valid, and this use pushes it to now() + 30 minutes.
    await q("UPDATE sessions SET idle_expires_at = now() + interval '5 minutes' WHERE id = $1", [row?.id]);
    expect(await pageStatus(c)).toBe("signed_in");
    const [{ left }] = await q("SELECT extract(epoch FROM idle_expires_at - now())::int AS left FROM sessions WHERE id = $1", [row?.id]);
    expect(left).toBeGreaterThan(29 * 60);
    // 30 minutes idle: signed out, though the absolute expiry is days away.
    await q("UPDATE sessions SET idle_expires_at = now() - interval '1 second' WHERE id = $1", [row?.id]);
    expect(await pageStatus(c)).toBe("signed_out");
    expect(await q("SELECT expires_at > now() + interval '13 days' AS far FROM sessions WHERE id = $1", [row?.id])).toEqual([{ far: true }]);
  });

  it("all of a user's sessions end when the password changes", async () => {
    const one = cookieOf(await signIn(web, { email: "rita@acme.test", password }));
    const two = cookieOf(await signIn(web, { email: "rita@acme.test", password }, { from: "127.0.0.9" }));
    expect(await pageStatus(one)).toBe("signed_in");
    await upsertMember(d.t.db, { orgId, email: "rita@acme.test", name: "rita", password: "another long password", role: "owner" });
    expect(await pageStatus(one)).toBe("signed_out");
    expect(await pageStatus(two)).toBe("signed_out");
    expect((await signIn(web, { email: "rita@acme.test", password })).status).toBe(401);
    expect((await signIn(web, { email: "rita@acme.test", password: "another long password" })).status).toBe(200);
  });

  it("expired rows are purged by the sweeper", async () => {
    await q("UPDATE sessions SET expires_at = now() - interval '1 minute' WHERE id IN (SELECT id FROM sessions LIMIT 2)");
    const dead = (await q("SELECT count(*)::int AS n FROM sessions WHERE NOT (expires_at > now() AND idle_expires_at > now())"))[0].n;
    expect(dead).toBeGreaterThanOrEqual(2);
    const swept = await sweepOnce(d.t.db, { staleSeconds: 3600, batchSize: 100, outboxRetentionSeconds: 3600 });
    expect(swept.sessionsPurged).toBe(dead);
    expect(await q("SELECT count(*)::int AS n FROM sessions WHERE NOT (expires_at > now() AND idle_expires_at > now())")).toEqual([{ n: 0 }]);
  });
});

describe("Secure cookies", () => {
  it("are Secure when a proxy says the request came over https, and not over plain http", async () => {
    const https = await signIn(web, { email: "sam@acme.test", password }, { headers: { "x-forwarded-proto": "https" } });
    const cookie = https.headers["set-cookie"]?.find((c) => c.startsWith("hf_session=")) ?? "";
    expect(cookie).toMatch(/;\s*Secure/i);
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    expect(cookie).toMatch(/;\s*SameSite=lax/i);
    const plain = await signIn(web, { email: "sam@acme.test", password });
    expect(plain.headers["set-cookie"]?.find((c) => c.startsWith("hf_session="))).not.toMatch(/;\s*Secure/i);
  });
});

/** The pid of the process listening on `port` (the next-server), from /proc/net/tcp and each process's fds. */
function listenerPid(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[1]?.endsWith(`:${hex}`) && f[3] === "0A" && f[9]) inodes.add(f[9]);
    }
  }
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m?.[1] && inodes.has(m[1])) return Number(pid);
      } catch {
        // gone
      }
    }
  }
  throw new Error(`no process listens on ${port}`);
}

const memoryOf = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024, name: /^Name:\s+(.*)$/m.exec(status)?.[1] };
};

/**
 * Streams `total` bytes to the route (with a Content-Length, or chunked without one) and resolves with the answer as
 * soon as it comes, stopping the upload; `sent` says how much had been written when the answer came.
 */
function upload(server: WebServer, path: string, total: number, chunked: boolean, headers: Record<string, string>): Promise<{ status: number; body: string; sent: number; error?: string }> {
  return new Promise((resolve) => {
    let sent = 0;
    let finished = false;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const req = httpRequest({
      host: "127.0.0.1",
      port: server.port,
      path,
      method: "POST",
      agent: false,
      headers: { "content-type": "application/json", ...headers, ...(chunked ? {} : { "content-length": String(total) }) },
    });
    const done = (r: { status: number; body: string; error?: string }) => {
      if (finished) return;
      finished = true;
      resolve({ ...r, sent });
      req.destroy();
    };
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => done({ status: res.statusCode ?? 0, body }));
      res.on("error", (e) => done({ status: res.statusCode ?? 0, body, error: e.message }));
    });
    req.on("error", (e) => done({ status: 0, body: "", error: (e as NodeJS.ErrnoException).code ?? e.message }));
    // One chunk at a time, each after the last was written and the event loop has turned, as a browser uploads: the
    // server answers and closes while the upload is still going, and a client writing in a tight loop can hit the
    // closed socket (EPIPE) before it has read the answer waiting for it.
    const pump = () => {
      if (finished) return;
      if (sent >= total) return void req.end();
      sent += chunk.length;
      req.write(chunk, () => setImmediate(pump));
    };
    pump();
  });
}

describe("body limits", () => {
  it("a 100 MB body to every body-reading route is refused with 413 while streaming; the server's memory stays flat", async () => {
    const pid = listenerPid(web.port);
    const before = memoryOf(pid);
    expect(before.name).toMatch(/holdfast-web|next|node/);
    const hundredMb = 100 * 1024 * 1024;
    // tRPC reads a body only for a session (without one it answers 401 unread: worst-shapes.test.ts).
    const cookie = cookieOf(await signIn(web, { email: "sam@acme.test", password })) ?? "";
    const routes: [string, Record<string, string>][] = [
      ["/api/auth/sign-in", {}],
      ["/api/demo/echo", {}],
      ["/api/signals/email?org=acme", { authorization: `Bearer ${inboundToken}` }],
      ["/api/slack/interactions", { "content-type": "application/x-www-form-urlencoded" }],
      ["/api/trpc/drafts.save", { cookie }],
      ["/api/hooks/acme/flow", {}],
    ];
    const results: string[] = [];
    for (const [path, headers] of routes) {
      for (const chunked of [false, true]) {
        const what = `${path} ${chunked ? "chunked" : "content-length"}`;
        // The server stops reading, answers 413 and closes (Node sends `Connection: close` for an unread body); a
        // client still uploading can now and then hit the reset before it reads the answer. Such an attempt (no HTTP
        // answer at all) is made again; any HTTP answer must be the 413.
        let r = await upload(web, path, hundredMb, chunked, headers);
        for (let retry = 0; r.status === 0 && retry < 3; retry++) {
          results.push(`${what}: connection reset (${r.error}) after ${(r.sent / 1024 / 1024).toFixed(1)} MB written, again`);
          r = await upload(web, path, hundredMb, chunked, headers);
        }
        results.push(`${what}: ${r.status} after ${(r.sent / 1024 / 1024).toFixed(1)} MB written`);
        expect(r.status, `${what} ${r.error ?? ""}`).toBe(413);
        expect(JSON.parse(r.body), path).toMatchObject({ error: { code: "payload_too_large" } });
      }
    }
    const after = memoryOf(pid);
    console.log(
      `next-server pid ${pid} (${before.name}): RSS ${before.rssMb.toFixed(1)} MB -> ${after.rssMb.toFixed(1)} MB, ` +
        `peak ${before.peakMb.toFixed(1)} MB -> ${after.peakMb.toFixed(1)} MB\n  ${results.join("\n  ")}`,
    );
    expect(after.rssMb - before.rssMb).toBeLessThan(50);
    expect(after.peakMb - before.peakMb).toBeLessThan(50);
    // The server still answers.
    expect((await send(web, "/api/health?live=1")).status).toBe(200);
  }, 300_000);

  it("Add to Slack reads no body: 200 MB posted to /api/slack/install, signed in or not, leaves the server's memory flat", async () => {
    const pid = listenerPid(web.port);
    const before = memoryOf(pid);
    const cookie = cookieOf(await signIn(web, { email: "sam@acme.test", password })) ?? "";
    const twoHundredMb = 200 * 1024 * 1024;
    const outcomes: string[] = [];
    for (const [who, headers] of [
      ["no session", {}],
      ["signed-in owner", { cookie }],
    ] as const) {
      let r = await upload(web, "/api/slack/install?org=acme", twoHundredMb, false, { "content-type": "application/x-www-form-urlencoded", ...headers });
      for (let retry = 0; r.status === 0 && retry < 3; retry++) r = await upload(web, "/api/slack/install?org=acme", twoHundredMb, false, { "content-type": "application/x-www-form-urlencoded", ...headers });
      outcomes.push(`${who}: ${r.status} after ${(r.sent / 1024 / 1024).toFixed(1)} MB written`);
      expect(r.status, `${who} ${r.error ?? ""}`).toBe(303);
    }
    const after = memoryOf(pid);
    console.log(`Add to Slack, 200 MB: RSS ${before.rssMb.toFixed(1)} MB -> ${after.rssMb.toFixed(1)} MB, peak ${before.peakMb.toFixed(1)} MB -> ${after.peakMb.toFixed(1)} MB; ${outcomes.join("; ")}`);
    expect(after.rssMb - before.rssMb).toBeLessThan(50);
    expect(after.peakMb - before.peakMb).toBeLessThan(50);
  }, 300_000);

  it("bodies within the limits still work", async () => {
    const echo = await send(web, "/api/demo/echo", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ hello: "world" }) });
    expect(echo.status).toBe(200);
    expect(echo.json()).toMatchObject({ received: { hello: "world" } });
    const cookie = cookieOf(await signIn(web, { email: "sam@acme.test", password })) ?? "";
    // tRPC gets the bytes read under the limit: the input reaches its validation.
    const trpc = await send(web, "/api/trpc/drafts.save?batch=1", {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: JSON.stringify({ 0: { json: { orgSlug: "acme" } } }),
    });
    expect(trpc.status, trpc.body).toBe(400);
    expect(trpc.body).toMatch(/automationId/);
  });
});

describe("/metrics and health", () => {
  it("/metrics: 404 without METRICS_TOKEN configured, 401 without or with a wrong token, 200 with the right one", async () => {
    expect((await send(bare, "/metrics")).status).toBe(404);
    expect((await send(bare, "/metrics", { headers: { authorization: `Bearer ${metricsToken}` } })).status).toBe(404);
    expect((await send(web, "/metrics")).status).toBe(401);
    expect((await send(web, "/metrics", { headers: { authorization: "Bearer not-the-token" } })).status).toBe(401);
    expect((await send(web, "/metrics", { headers: { authorization: `Bearer ${metricsToken}x` } })).status).toBe(401);
    const ok = await send(web, "/metrics", { headers: { authorization: `Bearer ${metricsToken}` } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatch(/^holdfast_ready 1$/m);
  });

  it("public health says only ready or not ready; the figures need the token", async () => {
    const pub = await send(web, "/api/health");
    expect(pub.status).toBe(200);
    expect(pub.json()).toEqual({ status: "ready" });
    const down = await send(bare, "/api/health");
    expect(down.status).toBe(503);
    expect(down.json()).toEqual({ status: "not_ready" });
    expect(down.body).not.toMatch(/redis|127\.0\.0\.1|error/i);
    expect((await send(web, "/api/health", { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const detailed = await send(web, "/api/health", { headers: { authorization: `Bearer ${metricsToken}` } });
    expect(detailed.status).toBe(200);
    expect(detailed.json()).toMatchObject({ status: "ready", ok: true, figures: { timers: expect.any(Object) } });
    expect((await send(web, "/api/health?live=1")).status).toBe(200);
    expect((await send(bare, "/api/health?live=1")).status).toBe(200);
  });

  it("/api/demo/echo exists only with HOLDFAST_DEMO_ECHO=1", async () => {
    const off = await send(bare, "/api/demo/echo", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(off.status).toBe(404);
    const on = await send(web, "/api/demo/echo", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(on.status).toBe(200);
  });
});
