import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllowList } from "../src/base/allow-list";
import { performHttpRequest } from "../src/providers/effects/http-request";
import { guardedRequest } from "../src/providers/net/request";
import type { HttpRequestConfig } from "../src/versions/graph";

/**
 * One http_request call against a real server on this machine: what is sent, and how each kind of answer (or none)
 * becomes the step's outcome. The egress guard's refusals for every transport are in egress.test.ts.
 */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: Server;
let base: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      const path = req.url ?? "/";
      if (path === "/json") res.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify({ ok: true, got: body ? JSON.parse(body) : null }));
      else if (path === "/text") res.writeHead(201, { "content-type": "text/plain" }).end("made");
      else if (path === "/bad-json") res.writeHead(200, { "content-type": "application/json" }).end("{not json");
      else if (path === "/big") res.writeHead(200, { "content-type": "application/json" }).end(`"${"x".repeat(300 * 1024)}"`);
      else if (path === "/busy") res.writeHead(429, { "retry-after": "7", "set-cookie": ["a=1", "b=2"] }).end("slow down");
      else if (path === "/broken") res.writeHead(500).end("oops");
      else if (path === "/denied") res.writeHead(403).end("no");
      else if (path === "/gone") res.writeHead(404).end("not here");
      else if (path === "/moved") res.writeHead(302, { location: "/json" }).end();
      else if (path === "/slow") setTimeout(() => res.writeHead(200).end("late"), 2_000);
      else if (path === "/stall") res.writeHead(200, { "content-type": "text/plain" }).write("the start of an answer that never ends");
      else res.writeHead(200).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const config = (path: string, over: Partial<HttpRequestConfig> = {}): HttpRequestConfig => ({
  url: `${base}${path}`,
  method: "POST",
  headers: {},
  sendInput: false,
  timeoutMs: 5_000,
  idempotent: true,
  ...over,
});

const call = (c: HttpRequestConfig, more: Partial<Parameters<typeof performHttpRequest>[0]> = {}) =>
  performHttpRequest({ config: c, idempotencyKey: "key-1", runId: "run_1", input: { contact: "ada" }, signal: AbortSignal.timeout(10_000), ...more });

const last = () => seen[seen.length - 1] as Seen;

describe("an http_request call", () => {
  it("sends the body as JSON with its Idempotency-Key and run id, and reads a JSON answer", async () => {
    const outcome = await call(config("/json", { body: { hi: 1 }, headers: { "X-Custom": "yes" } }));
    expect(outcome).toEqual({ kind: "done", output: { status: 200, body: { ok: true, got: { hi: 1 } } } });
    expect(last()).toMatchObject({ method: "POST", url: "/json", body: '{"hi":1}' });
    expect(last().headers).toMatchObject({
      "idempotency-key": "key-1",
      "holdfast-run-id": "run_1",
      "content-type": "application/json",
      "content-length": "8",
      "x-custom": "yes",
    });
  });

  it("sends the run's input with the body when asked, and nothing with a GET", async () => {
    await call(config("/json", { body: { b: 2 }, sendInput: true }));
    expect(JSON.parse(last().body)).toEqual({ input: { contact: "ada" }, body: { b: 2 } });
    const outcome = await call(config("/json", { method: "GET", body: { ignored: true } }));
    expect(outcome).toEqual({ kind: "done", output: { status: 200, body: { ok: true, got: null } } });
    expect(last()).toMatchObject({ method: "GET", body: "" });
    expect(last().headers["content-type"]).toBeUndefined();
  });

  it("keeps a text answer as text, an answer that is not the JSON it says as its text, and a long one clipped", async () => {
    expect(await call(config("/text"))).toEqual({ kind: "done", output: { status: 201, body: "made" } });
    expect(await call(config("/bad-json"))).toEqual({ kind: "done", output: { status: 200, body: "{not json" } });
    const big = await call(config("/big"));
    expect(big.kind).toBe("done");
    expect(((big as { output: { body: string } }).output.body as string).length).toBe(64 * 1024);
  });

  it("does not follow a redirect: the 302 is the answer, a permanent failure", async () => {
    const outcome = await call(config("/moved"));
    expect(outcome).toMatchObject({ kind: "fail", error: { code: "http_302", status: 302, permanent: true } });
    expect(last().url).toBe("/moved");
  });

  it("retries a refusal (429, with its Retry-After) and an uncertain failure (500); fails a 403 and a 404 for good", async () => {
    expect(await call(config("/busy"))).toEqual({
      kind: "retry",
      error: { code: "http_429", message: `POST ${base}/busy answered 429`, status: 429, notPerformed: true },
      retryAfterMs: 7_000,
    });
    expect(await call(config("/broken"))).toEqual({ kind: "retry", error: { code: "http_500", message: `POST ${base}/broken answered 500`, status: 500 } });
    expect(await call(config("/denied"))).toMatchObject({ kind: "fail", error: { code: "http_403", permanent: true, authorisation: true, notPerformed: true } });
    expect(await call(config("/gone"))).toMatchObject({ kind: "fail", error: { code: "http_404", permanent: true, authorisation: false } });
  });

  it("gives up on a slow answer after the config's timeout, to be retried", async () => {
    const started = Date.now();
    const outcome = await call(config("/slow", { timeoutMs: 300 }));
    expect(outcome).toEqual({ kind: "retry", error: { code: "timeout", message: "no answer within 300 ms" } });
    expect(Date.now() - started).toBeLessThan(1_900);
  });

  it("counts the answer's body in the timeout: an answer that starts and never ends times out too", async () => {
    const started = Date.now();
    expect(await call(config("/stall", { timeoutMs: 300 }))).toEqual({ kind: "retry", error: { code: "timeout", message: "no answer within 300 ms" } });
    expect(Date.now() - started).toBeLessThan(1_900);
  });

  it("stops when the step is cancelled (its signal), to be retried", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("the step was cancelled")), 200);
    const started = Date.now();
    const outcome = await call(config("/slow"), { signal: controller.signal });
    expect(outcome).toEqual({ kind: "retry", error: { code: "network", message: "the step was cancelled" } });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("says a connection never made certainly did not send the request", async () => {
    const closed = createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const outcome = await call(config("/json", { url: `http://127.0.0.1:${port}/json` }));
    expect(outcome).toMatchObject({ kind: "retry", error: { code: "network", notPerformed: true } });
  });

  it("puts a connection's credential in place of a plain header of the same name, spelled any way", async () => {
    await call(config("/json", { headers: { authorization: "plain" } }), { credential: { header: "Authorization", value: "Bearer s3cret" } });
    expect(last().headers.authorization).toBe("Bearer s3cret");
    expect(last().headers["idempotency-key"]).toBe("key-1");
  });

  it("sends one value a header however the config spells it: the engine's Idempotency-Key and Content-Type win", async () => {
    await call(config("/json", { body: { a: 1 }, headers: { "idempotency-key": "same-for-every-run", "content-type": "text/plain", "HOLDFAST-RUN-ID": "other" } }));
    // node:http's server joins a repeated header with ", " (and keeps the first Content-Type): one value each here.
    expect(last().headers).toMatchObject({ "idempotency-key": "key-1", "content-type": "application/json", "holdfast-run-id": "run_1" });
  });

  it("leaves the request's framing to the client: a config's Content-Length, Transfer-Encoding or Expect is not sent", async () => {
    const outcome = await call(config("/json", { body: { a: 1 }, headers: { "Content-Length": "999", "Transfer-Encoding": "chunked", Expect: "100-continue", Upgrade: "h2c" } }));
    expect(outcome).toMatchObject({ kind: "done", output: { status: 200, body: { ok: true, got: { a: 1 } } } });
    expect(last().headers["content-length"]).toBe("7");
    expect(last().headers["transfer-encoding"]).toBeUndefined();
    expect(last().headers.expect).toBeUndefined();
  });

  it("fails for good, nothing sent, a header no request can carry", async () => {
    const before = seen.length;
    const outcome = await call(config("/json", { headers: { "X-Note": "two\nlines" } }));
    expect(outcome).toEqual({
      kind: "fail",
      error: { code: "invalid_request", message: expect.stringMatching(/^the request could not be sent \(.*x-note.*\): change the step's URL or headers$/i), permanent: true, notPerformed: true },
    });
    expect(seen.length).toBe(before);
  });

  it("sends a user and password in the URL as Basic authorization, not in the URL; a config's Authorization wins", async () => {
    const withUser = (path: string) => `${base.replace("http://", "http://ada:p%40ss@")}${path}`;
    await call(config("/json", { url: withUser("/json") }));
    expect(last().headers.authorization).toBe(`Basic ${Buffer.from("ada:p@ss").toString("base64")}`);
    await call(config("/json", { url: withUser("/json"), headers: { Authorization: "Bearer mine" } }));
    expect(last().headers.authorization).toBe("Bearer mine");
  });

  it("refuses a destination the egress guard does not allow, without connecting", async () => {
    const before = seen.length;
    const outcome = await call(config("/json"), { egress: { allow: parseAllowList("") } });
    expect(outcome).toMatchObject({ kind: "fail", error: { code: "egress_refused", permanent: true, notPerformed: true } });
    expect(seen.length).toBe(before);
    // The same destination, allowed for this call: it goes.
    expect(await call(config("/json"), { egress: { allow: parseAllowList("127.0.0.1") } })).toMatchObject({ kind: "done" });
  });
});

describe("guardedRequest", () => {
  it("keeps at most keepBytes of an answer's body, reads the rest, and the kept connection serves the next call", async () => {
    const signal = AbortSignal.timeout(10_000);
    const answer = await guardedRequest(`${base}/big`, { method: "GET", headers: {}, timeoutMs: 5_000, signal, keepBytes: 100_000 });
    expect(answer.status).toBe(200);
    expect(answer.text.length).toBeLessThanOrEqual(100_000);
    expect(answer.text.startsWith('"xxx')).toBe(true);
    const next = await guardedRequest(`${base}/text`, { method: "GET", headers: {}, timeoutMs: 5_000, signal, keepBytes: 100_000 });
    expect(next).toMatchObject({ status: 201, text: "made" });
  });

  it("answers a repeated header as the list it is", async () => {
    const answer = await guardedRequest(`${base}/busy`, { method: "GET", headers: {}, timeoutMs: 5_000, signal: AbortSignal.timeout(10_000), keepBytes: 1_000 });
    expect(answer.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(answer.headers["retry-after"]).toBe("7");
  });
});
