import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, lanes } from "@holdfast/core/base";
import { GraphCache, parseGraph, rotateTriggerCredential, triggerSettings } from "@holdfast/core/versions";
import { createConnection } from "@holdfast/core/providers";
import { sessionCookie, signIn, upsertMember } from "@holdfast/core/people";
import { advanceRun, signPayload, StepRunner } from "@holdfast/core/run";
import {
  cliEntry,
  appEnv,
  connectAs,
  createTestDatabase,
  createTestPrefix,
  ensureWebBuilt,
  freePort,
  launchChromium,
  publish,
  replyGraph,
  repoRoot,
  signInPage,
  type SmtpTarget,
  spawnApp,
  startSmtpTarget,
  startTestRun,
  startWeb,
  type TestDatabase,
  waitFor,
  type WebServer,
} from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Secure by default, tried as an attacker would against the real web server, real processes and the real database:
 * every trigger authenticated (signed, URL token, rotation overlap), no server-side request forgery in any spelling,
 * no process with a built-in key, tenancy enforced by PostgreSQL itself, replies believed only from the contact.
 * The web hygiene attacks (open redirects, sign-in throttling, 100 MB bodies, /metrics) are in security-web.test.ts.
 */
let t: TestDatabase;
let web: WebServer;
let smtp: SmtpTarget;
let orgA = "";
let orgB = "";
const prefix = createTestPrefix();
const inboundToken = `inbound-${randomBytes(12).toString("hex")}`;
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;
const counts = async () =>
  (await q("SELECT (SELECT count(*) FROM runs)::int AS runs, (SELECT count(*) FROM run_events)::int AS events, (SELECT count(*) FROM outbox)::int AS outbox"))[0];

const bare = parseGraph({
  nodes: [
    { id: "t", kind: "trigger", config: { eventIdField: "id" } },
    { id: "e", kind: "end" },
  ],
  edges: [{ from: "t", to: "e" }],
});

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget();
  orgA = (await publish(t.db, bare, { org: "acme", automation: "signed" })).orgId;
  await publish(t.db, bare, { org: "acme", automation: "form", triggerAuth: "url_token" });
  orgB = (await publish(t.db, bare, { org: "globex", automation: "secret-plans" })).orgId;
  await upsertMember(t.db, { orgId: orgA, email: "alice@acme.test", name: "Alice", password: "alice's long password", role: "owner" });
  await upsertMember(t.db, { orgId: orgB, email: "bob@globex.test", name: "Bob", password: "bob's long password", role: "owner" });
  await q("INSERT INTO contacts (org_id, email) VALUES ($1, 'a@acme.test'), ($2, 'secret@globex.test')", [orgA, orgB]);
  await createConnection(t.db, { orgId: orgB, kind: "crm", name: "globex-crm", config: { baseUrl: "https://crm.example.com" }, secret: "globex-crm-key" });
  web = await startWeb({ DATABASE_URL: t.url, QUEUE_PREFIX: prefix.prefix, INBOUND_EMAIL_TOKEN: inboundToken, LOG_LEVEL: "warn" });
});

afterAll(async () => {
  await web?.stop();
  await smtp?.close();
  await prefix.clear();
  await t?.drop();
});

const automation = async (slug: string) => t.db.automation.findFirstOrThrow({ where: { slug } });
const credentials = async (slug: string) => {
  const a = await automation(slug);
  return triggerSettings(t.db, a.orgId, a.id, a.triggerAuth as "signed" | "url_token");
};
const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${web.base}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
const signedHeaders = (secret: string, id: string, body: string, at = Math.floor(Date.now() / 1000)) => ({
  "webhook-id": id,
  "webhook-timestamp": String(at),
  "webhook-signature": signPayload(secret, id, at, body),
});

/** Asserts a 401 JSON answer that wrote nothing. */
async function refused401(request: () => Promise<Response>): Promise<string> {
  const before = await counts();
  const res = await request();
  expect(res.status).toBe(401);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe("invalid_signature");
  expect(await counts()).toEqual(before);
  return body.error.message;
}

describe("every trigger is authenticated", () => {
  const body = JSON.stringify({ id: "evt_1", email: "maya@example.com" });

  it("a new automation's trigger is signed: unsigned, tampered, replayed-late and wrongly-keyed starts get 401 and write nothing", async () => {
    const { signingSecret } = await credentials("signed");
    expect(signingSecret).toMatch(/^whsec_/);
    await refused401(() => post("/api/hooks/acme/signed", body, { "webhook-id": "evt_u" }));
    const good = signedHeaders(signingSecret, "msg_1", body);
    await refused401(() => post("/api/hooks/acme/signed", JSON.stringify({ id: "evt_1", email: "attacker@evil.test" }), good));
    await refused401(() => post("/api/hooks/acme/signed", body, signedHeaders(signingSecret, "msg_old", body, Math.floor(Date.now() / 1000) - 600)));
    await refused401(() => post("/api/hooks/acme/signed", body, signedHeaders(`whsec_${randomBytes(32).toString("base64")}`, "msg_k", body)));
    // Another automation's secret does not open this one.
    const { signingSecret: other } = await credentials("secret-plans");
    await refused401(() => post("/api/hooks/acme/signed", body, signedHeaders(other, "msg_o", body)));
    // A URL token does not open a signed trigger.
    const { urlToken } = await credentials("signed");
    await refused401(() => post(`/api/hooks/acme/signed/${urlToken}`, body, { "webhook-id": "evt_t" }));

    const ok = await post("/api/hooks/acme/signed", body, good);
    expect(ok.status).toBe(202);
  });

  it("url_token mode: the 32-byte token in the path starts a run; none, a wrong one or a prefix of it is refused", async () => {
    const { urlToken } = await credentials("form");
    expect(Buffer.from(urlToken, "base64url")).toHaveLength(32);
    const form = JSON.stringify({ id: "form_1", email: "lead@example.com" });
    await refused401(() => post("/api/hooks/acme/form", form));
    await refused401(() => post(`/api/hooks/acme/form/${randomBytes(32).toString("base64url")}`, form));
    await refused401(() => post(`/api/hooks/acme/form/${urlToken.slice(0, 42)}`, form));
    const ok = await post(`/api/hooks/acme/form/${urlToken}`, form);
    expect(ok.status).toBe(202);
  });

  it("rotation: the previous token and secret are still accepted during the overlap, then refused", async () => {
    const a = await automation("form");
    const old = (await credentials("form")).urlToken;
    const fresh = await rotateTriggerCredential(t.db, a.orgId, a.id, "url_token");
    expect((await post(`/api/hooks/acme/form/${old}`, JSON.stringify({ id: "rot_1" }))).status).toBe(202);
    expect((await post(`/api/hooks/acme/form/${fresh}`, JSON.stringify({ id: "rot_2" }))).status).toBe(202);
    // The database clock passes the overlap (24 hours): the old token stops working.
    await q("UPDATE trigger_credentials SET expires_at = now() - interval '1 second' WHERE secret = $1", [old]);
    await refused401(() => post(`/api/hooks/acme/form/${old}`, JSON.stringify({ id: "rot_3" })));
    expect((await post(`/api/hooks/acme/form/${fresh}`, JSON.stringify({ id: "rot_4" }))).status).toBe(202);

    const s = await automation("signed");
    const oldSecret = (await credentials("signed")).signingSecret;
    const newSecret = await rotateTriggerCredential(t.db, s.orgId, s.id, "signing_secret");
    const b = JSON.stringify({ id: "rot_s" });
    expect((await post("/api/hooks/acme/signed", b, signedHeaders(oldSecret, "rot_s_old", b))).status).toBe(202);
    expect((await post("/api/hooks/acme/signed", b, signedHeaders(newSecret, "rot_s_new", b))).status).toBe(202);
  });
});

describe("the trigger's credential in the editor", () => {
  it("an owner sees the URL with its token, switches to signed and sees the secret; the mode change holds", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await signInPage(page, web.base, "alice@acme.test", "alice's long password");
      const form = await automation("form");
      await page.goto(`${web.base}/automations/${form.id}`);
      await page.locator('[data-node="t"]').click();
      const url = page.locator('input[name="trigger-url"]');
      await expect.poll(() => url.inputValue()).toBe(`${web.base}/api/hooks/acme/form/${(await credentials("form")).urlToken}`);
      await page.screenshot({ path: join(repoRoot, "e2e/artifacts/security-trigger-url-token.png") });
      await page.selectOption('select[name="trigger-mode"]', "signed");
      await expect.poll(() => url.inputValue()).toBe(`${web.base}/api/hooks/acme/form`);
      await expect.poll(() => page.locator('input[name="trigger-secret"]').inputValue()).toBe((await credentials("form")).signingSecret);
      await page.screenshot({ path: join(repoRoot, "e2e/artifacts/security-trigger-signed.png") });
      expect((await automation("form")).triggerAuth).toBe("signed");
      await page.selectOption('select[name="trigger-mode"]', "url_token");
      await expect.poll(async () => (await automation("form")).triggerAuth).toBe("url_token");
    } finally {
      await browser.close();
    }
  });
});

describe("no server-side request forgery", () => {
  let listener4: Server;
  let listener6: Server;
  let connections = 0;
  let port = 0;

  beforeAll(async () => {
    listener4 = createServer((s) => {
      connections++;
      s.end("HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nsecret");
    });
    await new Promise<void>((r) => listener4.listen(0, "127.0.0.1", r));
    port = (listener4.address() as { port: number }).port;
    listener6 = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => listener6.listen(port, "::1", r)).catch(() => {});
  });
  afterAll(async () => {
    listener4?.close();
    listener6?.close();
  });

  const targets = () => [
    `http://127.0.0.1:${port}/internal`,
    `http://2130706433:${port}/decimal`,
    `http://0x7f.0.0.1:${port}/hex`,
    `http://0x7f000001:${port}/hex-whole`,
    `http://0177.0.0.1:${port}/octal`,
    `http://127.1:${port}/short`,
    `http://localhost:${port}/name-resolving-to-loopback`,
    `http://[::1]:${port}/ipv6-loopback`,
    `http://[::ffff:127.0.0.1]:${port}/ipv4-mapped`,
    `http://[::ffff:7f00:1]:${port}/ipv4-mapped-hex`,
    `http://0.0.0.0:${port}/unspecified`,
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://10.0.0.1/private",
    "http://172.16.0.1/private",
    "http://192.168.1.1/private",
    "http://100.64.0.1/cgnat",
    "http://[fd00::1]/ula",
    "http://[fe80::1]/link-local",
    "http://224.0.0.1/multicast",
  ];

  it("the listener answers a direct connection (so 0 below means refused, not unreachable)", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/`);
    expect(await res.text()).toBe("secret");
    expect(connections).toBe(1);
    connections = 0;
  });

  it("an http_request step to every refused range, in every spelling, fails once and permanently, naming the host; the listener gets 0 connections", async () => {
    const runs: { url: string; runId: string }[] = [];
    for (const [i, url] of targets().entries()) {
      // Published without the publish checks (as a graph published before the guard, or a name that later resolves
      // inward): the run-time guard must refuse it on its own.
      await publish(
        t.db,
        parseGraph({
          nodes: [
            { id: "t", kind: "trigger", config: { eventIdField: "id" } },
            { id: "fetch", kind: "http_request", config: { url, method: "GET", maxAttempts: 5 } },
            { id: "e", kind: "end" },
          ],
          edges: [
            { from: "t", to: "fetch" },
            { from: "fetch", to: "e" },
          ],
        }),
        { org: "acme", automation: `ssrf-${i}` },
      );
      runs.push({ url, runId: await startTestRun(t.db, `ssrf-${i}`, { id: `ssrf_${i}` }) });
    }
    // The processes as deployed: no egress exception at all.
    const env = appEnv(t.url, prefix.prefix, { WAKEUPS: "poll", POLL_INTERVAL_MS: "100", HOLDFAST_EGRESS_ALLOW: "" });
    const apps = [spawnApp("engine", { env }), spawnApp("lane-worker", { env: { ...env, LANE: "io" } })];
    try {
      await waitFor(
        async () => (await q("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'failed'", [runs.map((r) => r.runId)]))[0].n === runs.length,
        90_000,
        "every SSRF run to fail",
      );
    } finally {
      await Promise.all(apps.map((a) => a.stop()));
    }
    for (const { url, runId } of runs) {
      const [step] = await q("SELECT status, attempt, error FROM steps WHERE run_id = $1 AND node_id = 'fetch'", [runId]);
      expect(step.status, url).toBe("failed");
      expect(step.attempt, `${url} is never retried`).toBe(1);
      expect(step.error.message, url).toMatch(/refused to connect to \S+: /);
      expect(step.error.message, url).toMatch(/HOLDFAST_EGRESS_ALLOW/);
    }
    expect(connections).toBe(0);
  });

  it("publish refuses a graph whose literal URL is in a refused range, naming the node and the field (exit 65)", () => {
    const dir = mkdtempSync(join(tmpdir(), "hf-ssrf-"));
    const file = join(dir, "graph.json");
    writeFileSync(
      file,
      JSON.stringify({
        nodes: [
          { id: "t", kind: "trigger", config: {} },
          { id: "steal", kind: "http_request", config: { url: "http://169.254.169.254/latest/meta-data/" } },
          { id: "e", kind: "end" },
        ],
        edges: [
          { from: "t", to: "steal" },
          { from: "steal", to: "e" },
        ],
      }),
    );
    const out = spawnSync(process.execPath, [...cliEntry(repoRoot), "automations", "publish", "acme", "metadata", file], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: t.url, HOLDFAST_EGRESS_ALLOW: "" },
      encoding: "utf8",
    });
    expect(out.status).toBe(65);
    expect(out.stderr).toMatch(/node "steal" \(config\.url\).*169\.254\.169\.254/);
  });
});

describe("no built-in keys", () => {
  const cli = (args: string[], env: Record<string, string | undefined>) =>
    spawnSync(process.execPath, [...cliEntry(repoRoot), ...args], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: t.url, ...env } as NodeJS.ProcessEnv,
      encoding: "utf8",
    });

  it("`holdfast key init` generates the key file once (owner-only), and reuses it after", () => {
    const file = join(mkdtempSync(join(tmpdir(), "hf-key-")), "holdfast", "secret.key");
    const first = cli(["key", "init"], { HOLDFAST_SECRET_KEY: undefined, HOLDFAST_SECRET_KEY_FILE: file });
    expect(first.status).toBe(0);
    expect(first.stdout).toContain(`generated the secret key: ${file}`);
    expect(first.stdout).toContain("back it up");
    const key = readFileSync(file, "utf8");
    expect(key.trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = cli(["key", "init"], { HOLDFAST_SECRET_KEY: undefined, HOLDFAST_SECRET_KEY_FILE: file });
    expect(again.stdout).toContain(`using the secret key in ${file}`);
    expect(readFileSync(file, "utf8")).toBe(key);
  });

  it("the seed never (re)sets a known password: the demo exists only on an empty database, an old published password is replaced", async () => {
    // This database has organisations: the seed creates no demo and no user.
    const first = cli(["seed"], {});
    expect(first.status).toBe(0);
    expect(first.stdout).toContain("no demo is created");
    expect(await q("SELECT count(*)::int AS n FROM users WHERE email = 'demo@holdfast.local'")).toEqual([{ n: 0 }]);
    // An install seeded by an earlier version: its demo owner has the password the README once published.
    const { orgId } = await publish(t.db, bare, { org: "demo", automation: "demo-follow-up" });
    await upsertMember(t.db, { orgId, email: "demo@holdfast.local", name: "Demo Owner", password: "holdfast-demo", role: "owner" });
    const upgraded = cli(["seed"], {});
    expect(upgraded.status).toBe(0);
    const printed = /its new password is (\S+)/.exec(upgraded.stdout)?.[1];
    expect(printed).toBeTruthy();
    expect(await signIn(t.db, "demo@holdfast.local", "holdfast-demo")).toBeNull();
    expect(await signIn(t.db, "demo@holdfast.local", printed as string)).not.toBeNull();
    // Restarts leave it alone.
    expect(cli(["seed"], {}).stdout).not.toContain("password");
    expect(await signIn(t.db, "demo@holdfast.local", printed as string)).not.toBeNull();
  });

  it("no process starts without a key, or with a key that is not the database's", async () => {
    const missing = join(tmpdir(), `hf-no-key-${randomBytes(4).toString("hex")}`);
    const noKey = { HOLDFAST_SECRET_KEY: "", HOLDFAST_SECRET_KEY_FILE: missing };
    const wrongKey = { HOLDFAST_SECRET_KEY: randomBytes(32).toString("hex") };
    for (const app of ["engine", "relay", "sweeper", "lane-worker"] as const) {
      for (const keyEnv of [noKey, wrongKey]) {
        const proc = spawnApp(app, { env: { ...appEnv(t.url, prefix.prefix), ...keyEnv }, restart: false });
        await waitFor(async () => proc.exits.length > 0, 30_000, `${app} to refuse to start`);
        expect(proc.exits[0]?.code, `${app}\n${proc.output()}`).toBe(78);
        expect(proc.output(), `${app}\n${proc.output()}`).toMatch(keyEnv === noKey ? /no secret key: .*pnpm holdfast key init/ : /not the one this database's secrets were encrypted with/);
      }
    }
    const cliNoKey = cli(["runs", "list"], noKey);
    expect(cliNoKey.status).toBe(78);
    expect(cliNoKey.stderr).toMatch(/no secret key/);
    expect(cli(["runs", "list"], wrongKey).status).toBe(78);
    // The web server too: it stops at start-up instead of serving.
    await ensureWebBuilt();
    for (const keyEnv of [noKey, wrongKey]) {
      const next = spawnSync(join(repoRoot, "apps/web/node_modules/.bin/next"), ["start", "-p", String(await freePort()), "-H", "127.0.0.1"], {
        cwd: join(repoRoot, "apps/web"),
        env: { ...process.env, DATABASE_URL: t.url, NEXT_TELEMETRY_DISABLED: "1", ...keyEnv },
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(next.status, next.stdout + next.stderr).toBe(78);
      expect(next.stderr).toMatch(keyEnv === noKey ? /no secret key/ : /not the one this database's secrets were encrypted with/);
    }
  });
});

describe("tenancy is enforced by PostgreSQL", () => {
  type Client = Awaited<ReturnType<typeof connectAs>>;
  const asWeb = async (setup: (c: Client) => Promise<unknown>, sql: string, p: unknown[] = []) => {
    const c = await connectAs(t.url, "holdfast_web");
    try {
      await setup(c);
      return (await c.query(sql, p)).rows;
    } finally {
      await c.end();
    }
  };
  const none = async () => {};

  it("the web's role is neither superuser, owner nor BYPASSRLS; every table with org_id has forced row-level security", async () => {
    const admin = await connectAs(t.adminUrl, new URL(t.adminUrl).username);
    try {
      const [role] = (await admin.query("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'holdfast_web'")).rows;
      expect(role).toEqual({ rolsuper: false, rolbypassrls: false });
      const owned = await admin.query("SELECT relname FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE r.rolname = 'holdfast_web'");
      expect(owned.rows).toEqual([]);
      const tables = await admin.query(`
        SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r'
          AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'org_id' AND NOT a.attisdropped)`);
      expect(tables.rows.length).toBeGreaterThan(15);
      for (const r of tables.rows) expect(r, r.relname).toMatchObject({ relrowsecurity: true, relforcerowsecurity: true });
      // Foreign keys between organisation tables carry org_id.
      const single = await admin.query(`
        SELECT conrelid::regclass::text AS t, conname FROM pg_constraint
        WHERE contype = 'f' AND array_length(conkey, 1) = 1 AND confrelid::regclass::text NOT IN ('organisations', 'users')
          AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = conrelid AND a.attname = 'org_id')`);
      expect(single.rows).toEqual([]);
    } finally {
      await admin.end();
    }
  });

  it("a direct SQL read through the web role sees 0 rows of another organisation, whatever it asks", async () => {
    const tables = (await q("SELECT DISTINCT table_name AS t FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'org_id'")).map((r) => r.t as string);
    // No scope: nothing at all.
    for (const table of tables) expect(await asWeb(none, `SELECT count(*)::int AS n FROM ${table}`), table).toEqual([{ n: 0 }]);
    // Alice's session: acme's rows, never globex's, even when the query asks for globex by id.
    const session = await signIn(t.db, "alice@acme.test", "alice's long password");
    const { createHash } = await import("node:crypto");
    const id = createHash("sha256").update(session?.token ?? "").digest("hex");
    const asAlice = (c: Client) => c.query("SELECT set_config('holdfast.session', $1, false)", [id]);
    for (const table of tables) {
      expect(await asWeb(asAlice, `SELECT count(*)::int AS n FROM ${table} WHERE org_id = $1`, [orgB]), table).toEqual([{ n: 0 }]);
    }
    const seen = (await asWeb(asAlice, "SELECT email FROM contacts ORDER BY email")).map((r) => r.email);
    expect(seen).toContain("a@acme.test");
    expect(seen).not.toContain("secret@globex.test");
    expect(await asWeb(asAlice, "SELECT count(*)::int AS n FROM connections WHERE name = 'globex-crm'")).toEqual([{ n: 0 }]);
    // Writing into another organisation is refused by the database.
    await expect(asWeb(asAlice, "INSERT INTO contacts (org_id, email) VALUES ($1, 'planted@evil.test')", [orgB])).rejects.toThrow(/row-level security/);
    // An expired session scopes nothing (judged by the database clock).
    await q("UPDATE sessions SET idle_expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    expect(await asWeb(asAlice, "SELECT count(*)::int AS n FROM contacts")).toEqual([{ n: 0 }]);
  });

  it("through the web server, a signed-in user of one organisation cannot reach another's run", async () => {
    const runB = await startTestRun(t.db, "secret-plans", { id: "plans_1" }, { org: "globex" });
    const session = await signIn(t.db, "alice@acme.test", "alice's long password");
    const page = await fetch(`${web.base}/runs/${runB}`, { headers: { cookie: `${sessionCookie}=${session?.token}` } });
    expect(page.status).toBe(404);
    expect(await page.text()).not.toContain("secret-plans");
  });
});

describe("replies are believed only from the contact", () => {
  it("a forged reply (right In-Reply-To, another sender) is stored as unmatched with the reason and never moves the run", async () => {
    const graphs = new GraphCache();
    await publish(
      t.db,
      replyGraph(),
      { org: "acme", automation: "ask" },
    );
    await createConnection(t.db, { orgId: orgA, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
    const runId = await startTestRun(t.db, "ask", { id: "ask_1", email: "maya@example.com" });
    const [send] = await q("SELECT id FROM steps WHERE run_id = $1", [runId]);
    const runner = new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log: createLogger("test", "silent") });
    expect((await runner.run(send.id)).kind).toBe("settled");
    await advanceRun(t.db, graphs, { orgId: orgA, runId, reason: "step_settled" });
    const [{ output }] = await q("SELECT output FROM steps WHERE id = $1", [send.id]);

    const reply = (from: string, id: string) =>
      fetch(`${web.base}/api/signals/email?org=acme`, {
        method: "POST",
        headers: { authorization: `Bearer ${inboundToken}`, "content-type": "application/json" },
        body: JSON.stringify({ messageId: `<${id}@mail.example.com>`, from, subject: "Re: Hi", inReplyTo: output.messageId, text: "yes" }),
      });
    const forged = await reply("Maya <attacker@evil.test>", "forged-1");
    expect(forged.status).toBe(200);
    const [signal] = await q("SELECT consumed_at, unmatched_reason FROM signals WHERE identity = '<forged-1@mail.example.com>'");
    expect(signal.consumed_at).toBeNull();
    expect(signal.unmatched_reason).toMatch(/attacker@evil\.test is not the recipient maya@example\.com/);
    expect(await q("SELECT status FROM steps WHERE run_id = $1 AND node_id = 'await_reply'", [runId])).toEqual([{ status: "waiting" }]);

    const genuine = await reply('"Maya" <MAYA@Example.com>', "genuine-1");
    expect(genuine.status).toBe(202);
    expect(await q("SELECT status FROM steps WHERE run_id = $1 AND node_id = 'await_reply'", [runId])).toEqual([{ status: "done" }]);
  });
});
