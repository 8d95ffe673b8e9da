import { describe, expect, it } from "vitest";
import { checkBearer } from "../src/server/bearer";
import { readBodyLimited } from "../src/server/body";
import { safeNext } from "../src/server/next-path";
import { clientAddress, isHttpsRequest, peerHeader } from "../src/server/request-info";

describe("the path after signing in", () => {
  it("keeps same-site paths, their query and fragment", () => {
    expect(safeNext("/runs/run_1?x=1")).toBe("/runs/run_1?x=1");
    expect(safeNext("/automations/aut_1?org=acme#diff")).toBe("/automations/aut_1?org=acme#diff");
    expect(safeNext("/settings")).toBe("/settings");
    expect(safeNext("/runs?q=a%20b")).toBe("/runs?q=a%20b");
    expect(safeNext("/runs/./x/../y")).toBe("/runs/y");
  });

  const offSite: [string, unknown][] = [
    ["protocol-relative", "//evil.com"],
    ["protocol-relative with a path", "//evil.com/approvals"],
    ["dot segment", "/.//evil.com"],
    ["dot-dot segment", "/..//evil.com"],
    ["encoded dot", "/%2e//evil.com"],
    ["encoded dot-dot, upper case", "/%2E%2E//evil.com"],
    ["mixed dot-dot", "/.%2e//evil.com"],
    ["two dot-dots", "/a/../..//evil.com"],
    ["backslash", "/\\evil.com"],
    ["backslash then slash", "/\\/evil.com"],
    ["encoded backslash", "/%5cevil.com"],
    ["encoded backslash, upper case", "/%5Cevil.com"],
    ["encoded slash", "/%2f/evil.com"],
    ["encoded slash, upper case", "/%2F/evil.com"],
    ["double-encoded slash", "/%252f/evil.com"],
    ["encoded slash with a malformed escape after it", "/%2f/evil.com%zz"],
    ["tab", "/\t/evil.com"],
    ["newline", "/\n/evil.com"],
    ["carriage return", "/\r/evil.com"],
    ["encoded tab", "/%09/evil.com"],
    ["NUL", "/\u0000/evil.com"],
    ["absolute https", "https://evil.com"],
    ["absolute http", "http://evil.com/approvals"],
    ["scheme-less host", "evil.com"],
    ["javascript:", "javascript:alert(1)"],
    ["javascript: after a slash-less space", " javascript:alert(1)"],
    ["data:", "data:text/html,<script>alert(1)</script>"],
    ["leading space", " //evil.com"],
    ["empty", ""],
    ["a number", 42],
    ["null", null],
    ["too long", `/${"a".repeat(2_001)}`],
  ];
  it.each(offSite)("falls back for %s", (_name, next) => {
    expect(safeNext(next)).toBe("/approvals");
  });

  it("never returns a path that leaves the site after normalisation", () => {
    const parts = ["/", "//", "\\", ".", "..", "%2e", "%2f", "%5c", "%252f", "evil.com", "a", "\t", "?", "#", "%", "@"];
    let seen = 0;
    // Every 4-part combination: the answer is either the fallback or a path a browser resolves on this site.
    for (const a of parts) for (const b of parts) for (const c of parts) for (const d of parts) {
      const out = safeNext(`/${a}${b}${c}${d}`);
      seen++;
      expect(out.startsWith("/")).toBe(true);
      expect(out.startsWith("//") || out.startsWith("/\\")).toBe(false);
      expect(new URL(out, "https://holdfast.example").origin).toBe("https://holdfast.example");
      const decoded = out.replace(/%([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
      expect(new URL(decoded.replace(/[\t\n\r]/g, ""), "https://holdfast.example").origin).toBe("https://holdfast.example");
    }
    expect(seen).toBe(parts.length ** 4);
  });
});

describe("Secure cookies", () => {
  const req = (url: string, headers: Record<string, string> = {}) => ({ url, headers: new Headers(headers) });
  it("are Secure when the public URL is https, the request URL is https, or a proxy says https", () => {
    expect(isHttpsRequest(req("http://127.0.0.1:3000/api/auth/sign-in"), "https://holdfast.example")).toBe(true);
    expect(isHttpsRequest(req("https://holdfast.example/api/auth/sign-in"), "http://localhost:3000")).toBe(true);
    expect(isHttpsRequest(req("http://127.0.0.1:3000/x", { "x-forwarded-proto": "https" }), "http://localhost:3000")).toBe(true);
    expect(isHttpsRequest(req("http://127.0.0.1:3000/x", { "x-forwarded-proto": "HTTPS" }), "http://localhost:3000")).toBe(true);
    expect(isHttpsRequest(req("http://127.0.0.1:3000/x", { "x-forwarded-proto": "https, http" }), "http://localhost:3000")).toBe(true);
  });
  it("are not Secure over plain http with nothing saying https", () => {
    expect(isHttpsRequest(req("http://127.0.0.1:3000/x"), "http://localhost:3000")).toBe(false);
    expect(isHttpsRequest(req("http://127.0.0.1:3000/x", { "x-forwarded-proto": "http" }), "http://localhost:3000")).toBe(false);
    expect(isHttpsRequest(req("http://127.0.0.1:3000/x", { "x-forwarded-proto": "httpsx" }), "http://localhost:3000")).toBe(false);
  });
});

describe("the client address", () => {
  const h = (o: Record<string, string>) => new Headers(o);
  it("is the stamped TCP peer, whatever X-Forwarded-For the client sends, unless TRUST_PROXY", () => {
    expect(clientAddress(h({ [peerHeader()]: "127.0.0.2", "x-forwarded-for": "9.9.9.9" }), false)).toBe("127.0.0.2");
    expect(clientAddress(h({ "x-forwarded-for": "9.9.9.9" }), false)).toBeNull();
  });
  it("behind a trusted proxy is the last X-Forwarded-For entry (the one the proxy added)", () => {
    expect(clientAddress(h({ [peerHeader()]: "10.0.0.1", "x-forwarded-for": "9.9.9.9, 203.0.113.7" }), true)).toBe("203.0.113.7");
    expect(clientAddress(h({ [peerHeader()]: "10.0.0.1" }), true)).toBe("10.0.0.1");
  });
  it("cannot be named by a client: the stamp's header name is random per process", () => {
    expect(peerHeader()).toMatch(/^x-holdfast-peer-[0-9a-f]{24}$/);
  });
});

describe("bearer tokens", () => {
  const r = (auth?: string) => new Request("http://x/metrics", auth ? { headers: { authorization: auth } } : {});
  it("unset, missing, wrong and right", () => {
    expect(checkBearer(r("Bearer abc"), undefined)).toEqual({ kind: "unset" });
    expect(checkBearer(r(), "a-metrics-token-0123")).toEqual({ kind: "missing" });
    expect(checkBearer(r("Bearer a-metrics-token-012"), "a-metrics-token-0123")).toEqual({ kind: "wrong" });
    expect(checkBearer(r("Basic a-metrics-token-0123"), "a-metrics-token-0123")).toEqual({ kind: "wrong" });
    expect(checkBearer(r("Bearer a-metrics-token-0123"), "a-metrics-token-0123")).toEqual({ kind: "ok" });
  });
});

describe("readBodyLimited", () => {
  const stream = (chunks: number, size: number, onPull: () => void) =>
    new ReadableStream<Uint8Array>({
      pull(c) {
        onPull();
        if (chunks-- <= 0) c.close();
        else c.enqueue(new Uint8Array(size));
      },
    });
  it("reads a body within the limit", async () => {
    const out = await readBodyLimited(new Request("http://x/", { method: "POST", body: "hello" }), 5);
    expect(out.ok && out.text()).toBe("hello");
  });
  it("refuses a declared Content-Length over the limit without reading", async () => {
    let pulls = 0;
    const body = stream(100, 1024, () => pulls++);
    const out = await readBodyLimited(new Request("http://x/", { method: "POST", body, headers: { "content-length": "102400" }, duplex: "half" } as RequestInit), 1024);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.response.status).toBe(413);
    expect(pulls).toBeLessThanOrEqual(1);
  });
  it("stops reading a chunked body once it passes the limit", async () => {
    let pulls = 0;
    const body = stream(100_000, 1024, () => pulls++);
    const out = await readBodyLimited(new Request("http://x/", { method: "POST", body, duplex: "half" } as RequestInit), 4096);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(await out.response.json()).toMatchObject({ error: { code: "payload_too_large" } });
    expect(pulls).toBeLessThan(10);
  });
});
