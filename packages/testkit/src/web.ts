import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { sessionCookie, signIn } from "@holdfast/core/people";
import type { Db } from "@holdfast/db";
import { inject } from "vitest";
import { openBrowsers } from "./open-browsers";
import { attachPageAudit, type PageAuditOptions } from "./page-audit";
import { repoRoot, waitFor, webNodeFlags } from "./procs";

const webDir = join(repoRoot, "apps/web");

export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/**
 * The web's build (`next build`, then its server's bundle) once per `vitest run`, whichever test file needs the web
 * app first (a lock directory; the others wait for the marker). HOLDFAST_SKIP_WEB_BUILD=1 reuses an existing build while iterating locally.
 */
export async function ensureWebBuilt(): Promise<void> {
  if (process.env.HOLDFAST_SKIP_WEB_BUILD === "1" && existsSync(join(webDir, ".next/BUILD_ID")) && existsSync(join(webDir, "dist/server.mjs"))) return;
  const marker = join(webDir, `.next-built-${inject("runTag")}`);
  const lock = join(webDir, ".next-build.lock");
  for (;;) {
    if (existsSync(marker)) return;
    try {
      mkdirSync(lock);
    } catch {
      // A lock left by a killed run goes after 15 minutes; otherwise wait for the build in progress.
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })!.mtimeMs > 15 * 60_000) rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 1_000));
      continue;
    }
    try {
      if (existsSync(marker)) return;
      const build = spawnSync("pnpm", ["--filter", "@holdfast/web", "build"], {
        cwd: repoRoot,
        env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
        encoding: "utf8",
      });
      if (build.status !== 0) throw new Error(`next build failed:\n${build.stdout}\n${build.stderr}`);
      writeFileSync(marker, new Date().toISOString());
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

export interface WebServer {
  base: string;
  port: number;
  log(): string;
  stop(): Promise<void>;
}

/** The built web app as production runs it (apps/web/server.ts: Next.js behind the web's own HTTP server) on a free port with this environment; resolves when it answers. */
export async function startWeb(env: Record<string, string>, portWanted?: number): Promise<WebServer> {
  await ensureWebBuilt();
  const port = portWanted ?? (await freePort());
  const base = `http://127.0.0.1:${port}`;
  let log = "";
  const web: ChildProcess = spawn(process.execPath, [...webNodeFlags(), "dist/server.mjs", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: webDir,
    env: { ...process.env, HOLDFAST_PUBLIC_URL: base, ...env, NEXT_TELEMETRY_DISABLED: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  web.stdout?.on("data", (d) => (log += d));
  web.stderr?.on("data", (d) => (log += d));
  await waitFor(async () => (await fetch(`${base}/api/health?live=1`).catch(() => null))?.ok, 60_000, `web to answer\n${log}`);
  return {
    base,
    port,
    log: () => log,
    stop: () =>
      new Promise<void>((resolve) => {
        if (web.exitCode !== null) return resolve();
        web.once("exit", () => resolve());
        web.kill("SIGTERM");
        setTimeout(() => web.kill("SIGKILL"), 5_000).unref();
      }),
  };
}

/** A signed-in browser's cookie for this user (a real session through core's signIn), for fetch requests. */
export async function sessionCookieFor(db: Db, email: string, password: string): Promise<string> {
  const session = await signIn(db, email, password);
  if (!session) throw new Error(`cannot sign in as ${email}`);
  return `${sessionCookie}=${session.token}`;
}

/**
 * fetch, once more if the pooled keep-alive connection was closed by the server between two requests (undici's
 * "other side closed": the server's keep-alive timeout raced the reuse). Not a retry of an answered request.
 */
export async function fetchAgain(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code !== "UND_ERR_SOCKET" && code !== "ECONNRESET") throw error;
    return fetch(url, init);
  }
}

/**
 * Debian's Chromium (never a downloaded browser), headless, with the flags a container needs. Every page it shows is
 * audited (page-audit.ts: axe-core and the engine-room words; a critical or serious finding fails the test file);
 * `audit` names the pages that are not Holdfast's and the words a page shows on purpose. HOLDFAST_PAGE_AUDIT=0 turns
 * the audit off (to measure what it costs).
 */
export async function launchChromium(options: { audit?: PageAuditOptions } = {}): Promise<import("playwright-core").Browser> {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  openBrowsers.add(browser);
  browser.on("disconnected", () => openBrowsers.delete(browser));
  if (process.env.HOLDFAST_PAGE_AUDIT !== "0") attachPageAudit(browser, options.audit);
  return browser;
}

/** Signs a Chromium page in through the real sign-in form and waits for the page it lands on (the inbox). */
export async function signInPage(page: import("playwright-core").Page, base: string, email: string, password: string): Promise<void> {
  await page.goto(`${base}/signin`);
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', password);
  await page.click('button[type="submit"]');
  await page.waitForURL(/\/approvals$/);
}
