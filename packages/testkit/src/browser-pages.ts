import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContextOptions, Locator, Page } from "playwright-core";
import { repoRoot } from "./procs";
import { testPassword } from "./members";
import { signInPage } from "./web";

/**
 * A page in a browser context of its own (`options`: viewport, time zone; closed with the page), signed in through
 * the real sign-in form as `email` and on the page it lands on (the inbox).
 */
export async function signedInPage(browser: Browser, base: string, email: string, options: BrowserContextOptions & { password?: string } = {}): Promise<Page> {
  const { password = testPassword, ...contextOptions } = options;
  const page = await browser.newPage(contextOptions);
  await signInPage(page, base, email, password);
  return page;
}

/**
 * A browser context that carries this session cookie (sessionCookieFor) for the web app on 127.0.0.1: signed in
 * without the form.
 */
export async function contextWithSession(browser: Browser, cookie: string, options: BrowserContextOptions = {}): Promise<import("playwright-core").BrowserContext> {
  const context = await browser.newContext(options);
  const [name, value] = cookie.split("=") as [string, string];
  await context.addCookies([{ name, value, domain: "127.0.0.1", path: "/", httpOnly: true, sameSite: "Lax" }]);
  return context;
}

/** Screenshots for review in e2e/artifacts, each named `<file>-<name>.png`: of a whole page, or of one element. */
export function screenshots(file: string): (shown: Page | Locator, name: string) => Promise<Buffer> {
  const artifacts = join(repoRoot, "e2e/artifacts");
  mkdirSync(artifacts, { recursive: true });
  return (shown, name) => {
    const path = join(artifacts, `${file}-${name}.png`);
    return "goto" in shown ? shown.screenshot({ path, fullPage: true }) : shown.screenshot({ path });
  };
}
