import { createServer, type Server } from "node:http";
import { describeFindings, launchChromium, pageAuditOf } from "@holdfast/testkit";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The page audit every browser test runs (packages/testkit/src/page-audit.ts) can fail: pages served here with the
 * same kind of script policy as the web app's (a nonce, no eval) are opened through launchChromium, and what the
 * audit recorded is taken back from it (so this file does not fail on pages made to fail).
 */
const pages: Record<string, string> = {
  "/bad": `<main><h1>Lead intake</h1><select><option>Owner</option></select><p>Delivery key sha256:9f2c…</p></main>`,
  "/details": `<main><h1>Lead intake</h1><p>Delivery received.</p>
    <details><summary>Details</summary><p>Delivery key sha256:9f2c…</p></details>
    <details open><summary>Details</summary><p>Prisma error P2024 and start key k-1</p></details></main>`,
  "/open-disclosure": `<main><h1>Lead intake</h1><details open><summary>More</summary><p>Circuit breaker open</p></details></main>`,
  "/later": `<main><h1>Lead intake</h1><p id="status">Loading</p>
    <script nonce="n0nce">setTimeout(() => { document.getElementById("status").textContent = "Price: 3 µ$ per token"; }, 50);</script></main>`,
  "/fetching": `<main><h1>Lead intake</h1><button type="button" id="load">Load the price</button><p id="price"></p>
    <script nonce="n0nce">document.getElementById("load").onclick = async () => {
      document.getElementById("price").textContent = await (await fetch("/price")).text();
    };</script></main>`,
  "/fine": `<main><h1>Lead intake</h1><label>Role <select><option>Owner</option></select></label><p>All good.</p></main>`,
  "/harness": `<main><select></select><p>undefined</p></main>`,
};

let server: Server;
let base = "";
let browser: Browser;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/price") return res.end("Price: undefined per token");
    const body = pages[req.url ?? ""];
    res.statusCode = body ? 200 : 404;
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.setHeader("content-security-policy", "default-src 'self'; script-src 'self' 'nonce-n0nce' 'strict-dynamic'; object-src 'none'; base-uri 'self'");
    res.end(`<!doctype html><html lang="en"><head><title>Audit fixture</title></head><body>${body ?? "<main><h1>Not found</h1></main>"}</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  browser = await launchChromium({ audit: { ignoreUrls: [/\/harness$/] } });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
});

const visit = async (path: string) => {
  const page = await browser.newPage();
  await page.goto(`${base}${path}`);
  const findings = await pageAuditOf(browser).take();
  await page.close();
  return findings;
};

describe("the page audit of every browser test", () => {
  it("records an unlabelled select (axe, critical) and an engine word in the page text, with the page and where", async () => {
    const findings = await visit("/bad");
    expect(findings.find((f) => f.rule === "select-name")).toMatchObject({ kind: "axe", impact: "critical", url: `${base}/bad` });
    expect(findings.find((f) => f.rule === "select-name")?.detail).toContain("select");
    expect(findings.find((f) => f.rule === "sha256")).toMatchObject({ kind: "word", impact: "serious" });
    expect(findings.find((f) => f.rule === "sha256")?.detail).toContain("Delivery key sha256");
    expect(describeFindings(findings)).toMatch(/\/bad\n {2}axe select-name \(critical\)/);
  });

  it("allows engine words under a Details disclosure, closed or open, and nowhere else", async () => {
    expect(await visit("/details")).toEqual([]);
    const other = await visit("/open-disclosure");
    expect(other.map((f) => f.rule)).toEqual(["breaker"]);
  });

  it("audits the page after it settled, not the first paint", async () => {
    expect((await visit("/later")).map((f) => f.rule)).toEqual(["µ"]);
  });

  it("audits a page again after its own fetch changed what it shows, with no navigation", async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/fetching`);
    await pageAuditOf(browser).flush();
    expect(pageAuditOf(browser).found()).toEqual([]);
    await page.click("#load");
    await expect.poll(() => pageAuditOf(browser).found().map((f) => f.rule)).toEqual(["undefined"]);
    expect(await pageAuditOf(browser).take()).toHaveLength(1);
    await page.close();
  });

  it("records nothing on a page without problems, and nothing on a page the test says is not Holdfast's", async () => {
    expect(await visit("/fine")).toEqual([]);
    expect(await visit("/harness")).toEqual([]);
  });

  it("audits a page again only when its text changed, and before it closes", async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/fine`);
    await pageAuditOf(browser).flush();
    const runs = pageAuditOf(browser).spent().axeRuns;
    await page.goto(`${base}/fine`);
    await pageAuditOf(browser).flush();
    expect(pageAuditOf(browser).spent().axeRuns).toBe(runs);
    // A change the page shows after the last navigation, seen only by the audit before closing.
    await page.evaluate(`document.querySelector("p").textContent = "Model price: undefined"`);
    await page.close();
    expect((await pageAuditOf(browser).take()).map((f) => f.rule)).toEqual(["undefined"]);
  });
});
