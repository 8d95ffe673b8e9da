import { createServer, type Server } from "node:http";
import { addMember, contextWithSession, publish, sessionCookieFor, startOnlyGraph, startTestDeployment, type TestDeployment, testPassword } from "@holdfast/testkit";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Issue 39, L2 and item 4, in Chromium against the built web app: no page can be framed (a page of the same site on
 * another port framed /approvals signed in, and a click in the frame approved), every page has a script policy that
 * runs the app's own scripts and nothing injected, and the app still works under it.
 */
let d: TestDeployment;
let browser: Browser;
let framer: Server;
let framerBase = "";
let cookie = "";

beforeAll(async () => {
  d = await startTestDeployment();
  const { orgId } = await publish(d.t.db, startOnlyGraph());
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "owner");
  cookie = await sessionCookieFor(d.t.db, "sam@acme.test", testPassword);
  await d.startWeb({ LOG_LEVEL: "warn" });
  // Another origin of the same site (127.0.0.1, another port): SameSite cookies are sent to frames it makes.
  framer = createServer((_req, res) => {
    res.setHeader("content-type", "text/html");
    res.end(`<!doctype html><title>framer</title><iframe id="f" src="${d.web.base}/approvals" width="800" height="600"></iframe>`);
  });
  await new Promise<void>((resolve) => framer.listen(0, "127.0.0.1", resolve));
  framerBase = `http://127.0.0.1:${(framer.address() as { port: number }).port}`;
  // The framing page is the test's own (another origin), not Holdfast's: the page audit leaves it out.
  browser = await d.launchBrowser({ audit: { ignoreUrls: [new RegExp(`^${framerBase.replaceAll(".", "\\.")}/`)] } });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => framer?.close(r));
  await d?.stop();
});

const signedInContext = () => contextWithSession(browser, cookie);

describe("framing and scripts", () => {
  it("every page and API answer refuses framing; pages carry a nonce script policy, fresh per request", async () => {
    const a = await fetch(`${d.web.base}/signin`);
    const b = await fetch(`${d.web.base}/signin`);
    const policy = a.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]{20,}' 'strict-dynamic'/);
    expect(policy).toContain("object-src 'none'");
    expect(policy).toContain("base-uri 'self'");
    expect(policy).not.toContain("unsafe-eval");
    expect(/'nonce-([^']+)'/.exec(policy)?.[1]).not.toBe(/'nonce-([^']+)'/.exec(b.headers.get("content-security-policy") ?? "")?.[1]);
    // The nonce is on the page's own scripts.
    const nonce = /'nonce-([^']+)'/.exec(policy)?.[1] as string;
    const html = await a.text();
    expect(html).toContain(`nonce="${nonce}"`);
    for (const path of ["/signin", "/approvals", "/api/health", "/api/trpc/members.list"]) {
      const r = await fetch(`${d.web.base}${path}`, { redirect: "manual" });
      expect(r.headers.get("x-frame-options"), path).toBe("DENY");
      expect(r.headers.get("x-content-type-options"), path).toBe("nosniff");
    }
  });

  it("a page of another origin cannot frame /approvals signed in", async () => {
    const context = await signedInContext();
    const page = await context.newPage();
    const blocked: string[] = [];
    page.on("console", (m) => {
      if (/frame-ancestors|Refused to display/i.test(m.text())) blocked.push(m.text());
    });
    await page.goto(framerBase);
    await page.waitForTimeout(1_500);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    // Chromium shows its own error page in place of the framed one: nothing of Holdfast is there to click.
    const framedText = await frame?.evaluate<string>("document.body ? document.body.innerText : ''").catch(() => "");
    expect(framedText ?? "").not.toMatch(/Approvals|Approve|Holdfast/);
    expect(blocked.join("\n")).toMatch(/frame-ancestors|Refused to display/);
    // Opened directly, the same page shows signed in.
    const direct = await context.newPage();
    await direct.goto(`${d.web.base}/approvals`);
    await expect.poll(() => direct.locator("html").getAttribute("data-hydrated")).not.toBeNull();
    await context.close();
  });

  it("the app hydrates and works under the policy, and neither an injected script nor an onerror attribute runs", async () => {
    const context = await signedInContext();
    const page = await context.newPage();
    const violations: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(`${d.web.base}/settings?org=acme`);
    await expect.poll(() => page.locator("html").getAttribute("data-hydrated")).not.toBeNull();
    await expect.poll(() => page.getByText("sam@acme.test").count()).toBeGreaterThan(0);
    expect(violations).toEqual([]);

    // The page as the server sent it (its policy header kept) with markup an attacker might get into it.
    await page.route(`${d.web.base}/approvals`, async (route) => {
      const response = await route.fetch();
      const body = (await response.text()).replace(
        "<body>",
        `<body><script>window.__injected = "script"</script><img src="/nothing.png" onerror="window.__injected = 'onerror'">`,
      );
      await route.fulfill({ response, body });
    });
    await page.goto(`${d.web.base}/approvals`);
    await expect.poll(() => page.locator("html").getAttribute("data-hydrated")).not.toBeNull();
    await page.waitForTimeout(500);
    expect(await page.evaluate<string | null>("window.__injected ?? null")).toBeNull();
    expect(violations.join("\n")).toMatch(/script/i);
    await context.close();
  });
});
