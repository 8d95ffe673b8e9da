import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { triggerSettings } from "@holdfast/core/versions";
import { signPayload } from "@holdfast/core/run";
import { publish, startOnlyGraph, startTestDeployment, type TestDeployment } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Issue 39's worst shapes, against the built web server (apps/web/dist/server.mjs) and a real database: every route a request
 * can reach without a session gets the worst bodies we know (repeated keys, deep nesting, many small fields, long
 * keys) at its size limit, without its credential. Each is answered in words, in at most 10 times what a plain body
 * of the same size takes there (medians, measured side by side), and /api/health keeps answering meanwhile. Then the
 * same shapes with a valid credential: a body too deep or with too many fields is a 400 in words, never a 500.
 */
let d: TestDeployment;
const inboundToken = "inbound-token-0123456789abcdef";
const slackSecret = "slack-signing-secret-for-tests";
let formToken = "";
let signedSecret = "";

const graph = () => startOnlyGraph({ eventIdField: "id", payloadHashFallback: true });

beforeAll(async () => {
  d = await startTestDeployment();
  const flow = await publish(d.t.db, graph(), { automation: "flow" });
  const form = await publish(d.t.db, graph(), { automation: "form", triggerAuth: "url_token" });
  formToken = (await triggerSettings(d.t.db, form.orgId, form.automationId, "url_token")).urlToken as string;
  signedSecret = (await triggerSettings(d.t.db, flow.orgId, flow.automationId, "signed")).signingSecret as string;
  await d.startWeb({ LOG_LEVEL: "warn", INBOUND_EMAIL_TOKEN: inboundToken, SLACK_SIGNING_SECRET: slackSecret, HOLDFAST_DEMO_ECHO: "1" });
}, 300_000);

afterAll(async () => d?.stop());

interface Answer {
  status: number;
  type: string;
  location: string;
  body: string;
  ms: number;
}

/** One POST on its own connection; resolves when the answer is complete (the server may answer before reading it all). */
function post(path: string, headers: Record<string, string>, body: string | Buffer): Promise<Answer> {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  return new Promise((resolve) => {
    const started = performance.now();
    let settled = false;
    const req = httpRequest({ host: "127.0.0.1", port: d.web.port, path, method: "POST", agent: false, headers: { ...headers, "content-length": String(bytes.length) } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      const done = () => {
        if (settled) return;
        settled = true;
        resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), location: String(res.headers.location ?? ""), body: text, ms: performance.now() - started });
        req.destroy();
      };
      res.on("end", done);
      res.on("error", done);
    });
    // A server that answers before reading the whole body closes the connection: the write may fail after the answer.
    req.on("error", (e) => {
      if (settled) return;
      settled = true;
      resolve({ status: 0, type: "", location: "", body: String((e as NodeJS.ErrnoException).code ?? e.message), ms: performance.now() - started });
    });
    req.end(bytes);
  });
}

const get = async (path: string) => {
  const started = performance.now();
  const r = await fetch(`${d.web.base}${path}`);
  await r.text();
  return { status: r.status, ms: performance.now() - started };
};

/** Pads `head + filler + tail` to exactly `size` bytes with `fill` repeated. */
const exactly = (size: number, head: string, unit: string, tail: string) => {
  const n = Math.max(0, Math.floor((size - head.length - tail.length) / unit.length));
  const s = head + unit.repeat(n) + tail;
  return s + " ".repeat(Math.max(0, size - s.length)); // JSON allows trailing whitespace; forms take it as a value
};

type Family = "json" | "form" | "multipart";
interface Shape {
  name: string;
  family: Family;
  contentType: string;
  body: (size: number) => string;
}

const json = "application/json";
const form = "application/x-www-form-urlencoded";
const boundary = "----holdfast-shapes";
const multipart = `multipart/form-data; boundary=${boundary}`;

/** A plain body of each family, then the worst shapes we know of each. */
const plain: Record<Family, Shape> = {
  json: { name: "plain JSON", family: "json", contentType: json, body: (n) => exactly(n, '{"id":"p","a":"', "x", '"}') },
  form: { name: "plain form", family: "form", contentType: form, body: (n) => exactly(n, "id=p&a=", "x", "") },
  multipart: { name: "plain multipart", family: "multipart", contentType: multipart, body: (n) => exactly(n, `--${boundary}\r\ncontent-disposition: form-data; name="text"\r\n\r\n`, "x", `\r\n--${boundary}--\r\n`) },
};
const worst: Shape[] = [
  { name: "form: a& repeated (H1)", family: "form", contentType: form, body: (n) => exactly(n, "", "a&", "") },
  { name: "form: one key repeated with values", family: "form", contentType: form, body: (n) => exactly(n, "", "a=1&", "") },
  { name: "form: many small fields", family: "form", contentType: form, body: (n) => fields(n, (i) => `f${i}=&`) },
  { name: "form: one long key", family: "form", contentType: form, body: (n) => exactly(n, "", "k", "=1") },
  { name: "JSON: one key repeated", family: "json", contentType: json, body: (n) => exactly(n, "{", '"a":1,', '"a":1}') },
  { name: "JSON: arrays nested", family: "json", contentType: json, body: (n) => "[".repeat(Math.floor(n / 2)) + "]".repeat(Math.floor(n / 2)) },
  { name: "JSON: objects nested", family: "json", contentType: json, body: (n) => nested(n) },
  { name: "JSON: many small fields", family: "json", contentType: json, body: (n) => `{${fields(n - 8, (i) => `"f${i}":0,`)}"z":0}` },
  { name: "JSON: many array elements", family: "json", contentType: json, body: (n) => exactly(n, '{"a":[', "0,", "0]}") },
  { name: "JSON: one long key", family: "json", contentType: json, body: (n) => exactly(n, '{"', "k", '":1}') },
  {
    name: "multipart: many small parts",
    family: "multipart",
    contentType: multipart,
    body: (n) => exactly(n, "", `--${boundary}\r\ncontent-disposition: form-data; name="a"\r\n\r\n1\r\n`, `--${boundary}--\r\n`),
  },
];

function fields(size: number, field: (i: number) => string): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; ; i++) {
    const f = field(i);
    if (length + f.length > size) break;
    parts.push(f);
    length += f.length;
  }
  return parts.join("");
}

function nested(size: number): string {
  const depth = Math.floor((size - 1) / 6);
  return '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

interface Route {
  name: string;
  path: string;
  limit: number;
  headers: () => Record<string, string>;
  families: Family[];
}

/** Every route a request reaches without a session, each without (or with a wrong) credential, at its size limit. */
const routes = (): Route[] => {
  const now = String(Math.floor(Date.now() / 1000));
  return [
    { name: "trigger, unknown automation", path: "/api/hooks/acme/no-such-automation", limit: 262_144, headers: () => ({}), families: ["json", "form"] },
    {
      name: "trigger, signed, wrong signature",
      path: "/api/hooks/acme/flow",
      limit: 262_144,
      headers: () => ({ "webhook-id": "msg_x", "webhook-timestamp": now, "webhook-signature": "v1,AAAA" }),
      families: ["json", "form"],
    },
    { name: "trigger, URL token, wrong token", path: "/api/hooks/acme/form/not-the-token", limit: 262_144, headers: () => ({}), families: ["json", "form"] },
    { name: "sign-in", path: "/api/auth/sign-in", limit: 8 * 1024, headers: () => ({}), families: ["json", "form"] },
    { name: "demo echo (no credential by design)", path: "/api/demo/echo", limit: 16 * 1024, headers: () => ({}), families: ["json"] },
    { name: "inbound email, no token", path: "/api/signals/email?org=acme", limit: 262_144, headers: () => ({}), families: ["json"] },
    { name: "SendGrid inbound, no token", path: "/api/signals/email/sendgrid?org=acme", limit: 262_144, headers: () => ({}), families: ["multipart", "form"] },
    {
      name: "Slack interactions, wrong signature",
      path: "/api/slack/interactions",
      limit: 64 * 1024,
      headers: () => ({ "x-slack-request-timestamp": String(Math.floor(Date.now() / 1000)), "x-slack-signature": "v0=00" }),
      families: ["form", "json"],
    },
    { name: "Add to Slack, no session", path: "/api/slack/install?org=acme", limit: 262_144, headers: () => ({}), families: ["form", "json"] },
    { name: "tRPC, no session", path: "/api/trpc/drafts.save?batch=1", limit: 2 * 1024 * 1024 - 1, headers: () => ({}), families: ["json", "form"] },
    { name: "a page's server action, no session", path: "/approvals", limit: 64 * 1024, headers: () => ({ "next-action": "0".repeat(42) }), families: ["multipart", "form", "json"] },
  ];
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** An answer a person or a sender can act on: not a 5xx; a refusal says why in a sentence (or redirects to where to go). */
function inWords(a: Answer): string | null {
  if (a.status === 0) return null; // the connection closed before an answer: checked by the caller
  if (a.status >= 500) return `status ${a.status}: ${a.body.slice(0, 200)}`;
  if (a.status < 300) return null; // taken (the demo echo answers what it was sent)
  if (a.status >= 300 && a.status < 400) return a.location ? null : `redirect ${a.status} without a location`;
  if (a.type.includes("json")) {
    const message = /"message":"([^"]{8,})"/.exec(a.body)?.[1];
    return message && /\s/.test(message) ? null : `no sentence in ${a.body.slice(0, 200)}`;
  }
  return a.body.length > 0 ? null : `empty ${a.status} answer`;
}

describe("the worst shapes, without a session or credential", () => {
  it("every route answers each in words, in at most 10 times a plain body's time, and /api/health keeps answering", async () => {
    // Warm up every route (first requests compile and connect).
    for (const r of routes()) for (let i = 0; i < 3; i++) await post(r.path, { "content-type": json, ...r.headers() }, "{}");
    const healthBefore: number[] = [];
    for (let i = 0; i < 20; i++) healthBefore.push((await get("/api/health")).ms);

    // /api/health every 25 ms for as long as the shapes are sent.
    const healthDuring: { status: number; ms: number }[] = [];
    let sending = true;
    const watcher = (async () => {
      while (sending) {
        healthDuring.push(await get("/api/health"));
        await new Promise((r) => setTimeout(r, 25));
      }
    })();

    const rows: string[] = [];
    const failures: string[] = [];
    for (const route of routes()) {
      for (const family of route.families) {
        const shapes = worst.filter((s) => s.family === family);
        const times = new Map<string, number[]>();
        // Interleaved rounds: plain, then each shape, five times over; the medians are compared.
        for (let round = 0; round < 5; round++) {
          for (const shape of [plain[family], ...shapes]) {
            const body = shape.body(route.limit);
            expect(Buffer.byteLength(body), `${shape.name} size`).toBeLessThanOrEqual(route.limit);
            let a = await post(route.path, { "content-type": shape.contentType, ...route.headers() }, body);
            // A server that refused before reading the body may close while the client still writes: once more.
            for (let again = 0; a.status === 0 && again < 3; again++) a = await post(route.path, { "content-type": shape.contentType, ...route.headers() }, body);
            if (a.status === 0) failures.push(`${route.name} / ${shape.name}: no answer (${a.body})`);
            const words = inWords(a);
            if (words) failures.push(`${route.name} / ${shape.name}: ${words}`);
            times.set(shape.name, [...(times.get(shape.name) ?? []), a.ms]);
          }
        }
        const base = median(times.get(plain[family].name) ?? []);
        for (const shape of shapes) {
          let m = median(times.get(shape.name) ?? []);
          let ratio = m / base;
          if (ratio > 10) {
            // A pause of the machine's (CI runs two files at once) can land on a few requests: measure the pair again.
            const again = { plain: [] as number[], shape: [] as number[] };
            for (let round = 0; round < 9; round++) {
              again.plain.push((await post(route.path, { "content-type": plain[family].contentType, ...route.headers() }, plain[family].body(route.limit))).ms);
              again.shape.push((await post(route.path, { "content-type": shape.contentType, ...route.headers() }, shape.body(route.limit))).ms);
            }
            m = median(again.shape);
            ratio = m / median(again.plain);
          }
          rows.push(`${route.name.padEnd(40)} ${shape.name.padEnd(38)} ${m.toFixed(1).padStart(7)} ms / plain ${base.toFixed(1).padStart(6)} ms = ${ratio.toFixed(2)}x`);
          if (ratio > 10) failures.push(`${route.name} / ${shape.name}: ${ratio.toFixed(1)}x a plain body (${m.toFixed(1)} ms against ${base.toFixed(1)} ms)`);
        }
      }
    }
    sending = false;
    await watcher;
    const before = median(healthBefore);
    const during = healthDuring.map((h) => h.ms);
    const slowest = Math.max(...during);
    console.log(
      `${rows.join("\n")}\n/api/health: median ${before.toFixed(1)} ms before; during, ${during.length} answers, median ${median(during).toFixed(1)} ms, slowest ${slowest.toFixed(1)} ms`,
    );
    expect(failures).toEqual([]);
    expect(healthDuring.every((h) => h.status === 200)).toBe(true);
    // Health is answered in its usual time while the shapes arrive (one request in flight at a time: the web is never
    // held up for long by any of them).
    expect(median(during) / before).toBeLessThan(10);
  }, 600_000);

  it("H1: the 30 KB body of a& repeated is answered in about the time of a plain 30 KB body", async () => {
    const h1 = "a&".repeat(15_000);
    const plainBody = `a=${"x".repeat(h1.length - 2)}`;
    const measure = async (rounds: number) => {
      const plainMs: number[] = [];
      const h1Ms: number[] = [];
      for (let i = 0; i < rounds; i++) {
        plainMs.push((await post("/api/hooks/acme/any-slug", { "content-type": form }, plainBody)).ms);
        const a = await post("/api/hooks/acme/any-slug", { "content-type": form }, h1);
        expect(a.status).toBe(404);
        h1Ms.push(a.ms);
      }
      console.log(`H1 body: median ${median(h1Ms).toFixed(1)} ms; plain 30 KB: ${median(plainMs).toFixed(1)} ms`);
      return median(h1Ms) / median(plainMs);
    };
    // A parse that grows with the square of the pairs is hundreds of times slower; a pause of the machine (CI runs two
    // files at once) can land on a few of seven requests of a few milliseconds, so a high first ratio is measured again
    // over more rounds before it counts.
    let ratio = await measure(7);
    if (ratio >= 3) ratio = await measure(21);
    expect(ratio).toBeLessThan(3);
  });
});

describe("with a valid credential", () => {
  const deepArray = (depth: number) => `{"id":"d${depth}","a":${"[".repeat(depth)}${"]".repeat(depth)}}`;
  const sign = (body: string, id: string) => {
    const ts = Math.floor(Date.now() / 1000);
    return { "content-type": json, "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": signPayload(signedSecret, id, ts, body) };
  };

  it("L5: JSON nested 3,000 or 40,000 deep is a 400 in words, never a 500; 64 levels still start a run", async () => {
    for (const depth of [3_000, 40_000]) {
      const tokenAnswer = await post(`/api/hooks/acme/form/${formToken}`, { "content-type": json }, deepArray(depth));
      expect(tokenAnswer.status, tokenAnswer.body).toBe(400);
      expect(JSON.parse(tokenAnswer.body).error.message).toMatch(/nested more than 64 levels deep/);
      const body = deepArray(depth);
      const signed = await post("/api/hooks/acme/flow", sign(body, `deep_${depth}`), body);
      expect(signed.status, signed.body).toBe(400);
      // Without the credential the same body is refused for that, before it is parsed.
      const wrong = await post("/api/hooks/acme/form/not-the-token", { "content-type": json }, deepArray(depth));
      expect(wrong.status).toBe(401);
    }
    const ok = await post(`/api/hooks/acme/form/${formToken}`, { "content-type": json }, deepArray(63));
    expect(ok.status, ok.body).toBe(202);
    // The delivery log says why, in a few words, without the body.
    const log = (await d.t.sql.query("SELECT reason FROM trigger_deliveries WHERE status = 400 ORDER BY seq DESC LIMIT 1")).rows[0];
    expect(log?.reason).toMatch(/body is nested more than 64 levels deep/);
  });

  it("a form of more than 1,000 fields, or repeated keys past it, is a 400 in words; 1,000 still start a run", async () => {
    const tooMany = await post(`/api/hooks/acme/form/${formToken}`, { "content-type": form }, "a&".repeat(15_000));
    expect(tooMany.status).toBe(400);
    expect(JSON.parse(tooMany.body).error.message).toBe("the form has more than 1,000 fields: send fewer");
    const fine = await post(`/api/hooks/acme/form/${formToken}`, { "content-type": form }, `id=f1&${Array.from({ length: 999 }, (_, i) => `tag=${i}`).join("&")}`);
    expect(fine.status, fine.body).toBe(202);
    const run = (await d.t.sql.query("SELECT input FROM runs WHERE id = $1", [JSON.parse(fine.body).runId])).rows[0];
    expect(run.input.tag).toHaveLength(999);
  });

  it("Slack interactions: a signed payload nested deep is refused in words", async () => {
    const payload = `payload=${encodeURIComponent(`{"type":"block_actions","x":${"[".repeat(5_000)}${"]".repeat(5_000)}}`)}`;
    const ts = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac("sha256", slackSecret).update(`v0:${ts}:${payload}`).digest("hex")}`;
    const a = await post("/api/slack/interactions", { "content-type": form, "x-slack-request-timestamp": ts, "x-slack-signature": signature }, payload);
    expect(a.status, a.body).toBeLessThan(500);
    expect(inWords(a)).toBeNull();
  });
});
