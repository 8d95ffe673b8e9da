import { appendFileSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Browser, BrowserContext, Page, Request } from "playwright-core";
import { type AuditFinding, auditFindings, auditFlushers } from "./audit-findings";

/**
 * Every page a browser test visits is audited without the test asking: axe-core (WCAG 2.0/2.1 A and AA, and axe's
 * best practices) and the page's text against the words the engine room uses. launchChromium attaches it to its
 * browser. A page is audited when it settles after each main-frame navigation (a load or a client-side route
 * change) and before it, its context or its browser closes; a page whose path and text were already audited is not
 * audited again. Findings are kept in audit-findings.ts; page-audit-gate.ts fails the test file on a critical or
 * serious one.
 */

export interface PageAuditOptions {
  /** Pages that are not Holdfast's (a test's own harness page on another port): never audited. */
  ignoreUrls?: RegExp[];
  /**
   * Words a page shows on purpose under test, each with the reason. Not for hiding a real problem: a word a
   * marketer, approver or operator would read belongs under a "Details" disclosure instead.
   */
  allowWords?: { url: RegExp; words: string[]; why: string }[];
}

/**
 * Not to be read outside a "Details" disclosure (docs/testing.md). Case-insensitive; "µ" also as the Greek letter.
 */
export const forbiddenWords: readonly (readonly [string, RegExp])[] = [
  ["breaker", /breaker/i],
  ["probe", /probe/i],
  ["digest", /digest/i],
  ["start key", /start[\s-]+key/i],
  ["sha256", /sha-?256/i],
  ["Prisma", /prisma/i],
  ["µ", /[µμ]/],
  ["undefined", /undefined/i],
  ["[object Object]", /\[object Object\]/],
];

const axeTags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"];
let axeSource: string | undefined;
const axe = () => (axeSource ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8"));

/**
 * The page's text as a reader sees it (innerText: hidden and closed-<details> content left out) without the
 * content of open "Details" disclosures. Code run in the page (a string: this package compiles without the DOM lib).
 */
const pageTextScript = `(() => {
  if (!document.body) return "";
  let text = document.body.innerText;
  for (const d of document.querySelectorAll("details[open]")) {
    const summary = d.querySelector(":scope > summary");
    if (!summary || !/^details\\b/i.test(summary.innerText.trim())) continue;
    const inner = d.innerText;
    if (text.includes(inner)) text = text.replace(inner, "\\n");
    else for (const line of inner.split("\\n")) if (line.trim()) text = text.replace(line, "\\n");
  }
  return text;
})()`;

/** No request under way for a moment, the document loaded, no finite animation running (a fade mid-way is not a colour). */
const quietScript = `document.readyState === "complete" &&
  document.getAnimations().every((a) => a.playState !== "running" || a.effect?.getTiming().iterations === Infinity)`;

/** null when the document has no axe: it was replaced between the injection and the run (a navigation mid-audit). */
const axeRunScript = `(async () => {
  if (typeof window.axe !== "object") return null;
  const result = await axe.run(document, {
    runOnly: { type: "tag", values: ${JSON.stringify(axeTags)} },
    resultTypes: ["violations"],
    iframes: false,
  });
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact ?? "minor",
    help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target.map(String).join(" "), html: n.html.slice(0, 160) })),
  }));
})()`;

interface Violation {
  id: string;
  impact: string;
  help: string;
  nodes: { target: string; html: string }[];
}

interface Watch {
  requests: Map<Request, number>;
  lastNetwork: number;
  /** Main-frame navigations so far (an audit that saw one happen starts again). */
  navigations: number;
  timer?: NodeJS.Timeout;
  queue: Promise<void>;
  closing: boolean;
}

/** A page gone or navigated away mid-audit: nothing to audit (the next page is audited when it settles). */
const pageGone = (e: unknown) => /closed|destroyed|detached|navigat|Target crashed|has been closed/i.test(String((e as Error)?.message ?? e));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface PageAudit {
  /** Audits every open page not audited in its present state and waits for the audits under way. */
  flush(): Promise<void>;
  /** This browser's findings recorded so far, without auditing anything more (a test of the audit itself). */
  found(): AuditFinding[];
  /** This browser's findings so far, taken out of the record (a test of the audit itself). */
  take(): Promise<AuditFinding[]>;
  /** Milliseconds spent settling and auditing, and how many pages axe ran on. */
  spent(): { ms: number; axeRuns: number; textChecks: number };
}

const audits = new WeakMap<Browser, PageAudit>();

/** The audit launchChromium attached to this browser (a test of the audit flushes it and takes its findings). */
export function pageAuditOf(browser: Browser): PageAudit {
  const handle = audits.get(browser);
  if (!handle) throw new Error("this browser has no page audit (launched without launchChromium, or with audit: false)");
  return handle;
}

export function attachPageAudit(browser: Browser, options: PageAuditOptions = {}): PageAudit {
  const watches = new WeakMap<Page, Watch>();
  const pages = new Set<Page>();
  const audited = new Set<string>();
  const read = new Set<string>();
  const recorded = new Set<string>();
  const spent = { ms: 0, axeRuns: 0, textChecks: 0 };
  const log = process.env.HOLDFAST_PAGE_AUDIT_LOG;

  const record = (f: Omit<AuditFinding, "browser">) => {
    const key = `${new URL(f.url).pathname}|${f.kind}|${f.rule}|${f.kind === "axe" ? f.detail : ""}`;
    if (recorded.has(key)) return;
    recorded.add(key);
    auditFindings.push({ ...f, browser });
  };

  const settle = async (page: Page, w: Watch) => {
    const until = Date.now() + 4_000;
    while (Date.now() < until) {
      const now = Date.now();
      // A request older than 10 s is a long poll or a stream, not the page loading.
      const loading = [...w.requests.values()].some((started) => now - started < 10_000);
      if (!loading && now - w.lastNetwork >= 250 && (await page.evaluate<boolean>(quietScript))) return;
      await sleep(100);
    }
  };

  /**
   * Audits the page once it settled. axe takes a moment: when the page navigated or its text changed meanwhile (a
   * route change mid-way, a re-render), the state it saw was a passing one, so the audit starts again (three tries;
   * a page that never holds still for axe is audited at its next trigger or before it closes).
   */
  const audit = async (page: Page) => {
    const w = watches.get(page);
    if (!w || page.isClosed() || w.closing) return;
    const started = Date.now();
    try {
      for (let attempt = 1; ; attempt++) {
        await settle(page, w);
        const url = page.url();
        const navigations = w.navigations;
        if (!/^https?:/.test(url) || options.ignoreUrls?.some((r) => r.test(url))) return;
        const text = await page.evaluate<string>(pageTextScript);
        const key = `${new URL(url).pathname}\n${text}`;
        if (audited.has(key)) return;
        // One read of the text is a consistent picture of a settled page: its words count even if axe is interrupted.
        if (!read.has(key)) {
          read.add(key);
          spent.textChecks++;
          wordsIn(url, text);
        }
        if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(axe());
        const violations = await page.evaluate<Violation[] | null>(axeRunScript);
        spent.axeRuns++;
        const moved = violations === null || w.navigations !== navigations || page.url() !== url || (await page.evaluate<string>(pageTextScript)) !== text;
        if (moved) {
          if (attempt < 3) continue;
          return;
        }
        audited.add(key);
        findingsOf(url, violations ?? [], Date.now() - started);
        return;
      }
    } catch (error) {
      if (page.isClosed() || pageGone(error)) return;
      // An audit that cannot run is a finding too: a silent audit would pass every page.
      record({ url: page.url(), kind: "axe", rule: "audit-error", impact: "serious", detail: String((error as Error)?.message ?? error).split("\n")[0]! });
    } finally {
      spent.ms += Date.now() - started;
    }
  };

  const wordsIn = (url: string, text: string) => {
    const allowed = new Set((options.allowWords ?? []).filter((a) => a.url.test(url)).flatMap((a) => a.words));
    for (const [word, pattern] of forbiddenWords) {
      if (allowed.has(word)) continue;
      const at = pattern.exec(text);
      if (!at) continue;
      const around = text.slice(Math.max(0, at.index - 60), at.index + at[0].length + 60).replace(/\s+/g, " ");
      record({ url, kind: "word", rule: word, impact: "serious", detail: around });
    }
  };

  const findingsOf = (url: string, violations: Violation[], ms: number) => {
    for (const v of violations) {
      for (const n of v.nodes) record({ url, kind: "axe", rule: v.id, impact: v.impact, detail: `${n.target} — ${v.help} — ${n.html}` });
    }
    if (!log) return;
    const counts = { critical: 0, serious: 0, moderate: 0, minor: 0 } as Record<string, number>;
    for (const v of violations) counts[v.impact] = (counts[v.impact] ?? 0) + v.nodes.length;
    const line = {
      url,
      counts,
      violations: violations.map((v) => `${v.id}:${v.impact}:${v.nodes.length}`),
      targets: violations.flatMap((v) => v.nodes.map((n) => `${v.id} ${n.target}`)),
      ms,
    };
    appendFileSync(log, `${JSON.stringify(line)}\n`);
  };

  /** One audit at a time per page (axe refuses to run twice at once), in the order asked. */
  const enqueue = (page: Page): Promise<void> => {
    const w = watches.get(page);
    if (!w) return Promise.resolve();
    if (w.timer) clearTimeout(w.timer);
    w.timer = undefined;
    w.queue = w.queue.then(() => audit(page));
    return w.queue;
  };

  /**
   * A navigation restarts the wait (the page before it is gone); a fetch does not, so a test that keeps the page busy
   * (type, test, type, save) still has it audited within half a second of the first change.
   */
  const schedule = (page: Page, ms = 200, restart = true) => {
    const w = watches.get(page);
    if (!w || w.closing) return;
    if (w.timer && !restart) return;
    if (w.timer) clearTimeout(w.timer);
    w.timer = setTimeout(() => void enqueue(page), ms);
  };

  const watchPage = (page: Page) => {
    if (watches.has(page)) return;
    const w: Watch = { requests: new Map(), lastNetwork: Date.now(), navigations: 0, queue: Promise.resolve(), closing: false };
    watches.set(page, w);
    pages.add(page);
    page.on("request", (r) => {
      w.requests.set(r, Date.now());
      const from = r.redirectedFrom();
      if (from) w.requests.delete(from);
      w.lastNetwork = Date.now();
    });
    const done = (r: Request) => {
      w.requests.delete(r);
      w.lastNetwork = Date.now();
    };
    // A page that fetched changes what it shows without navigating (a form opened, a list reloaded, an error):
    // audited again once quiet (only its text is read when that is unchanged).
    page.on("requestfinished", (r) => {
      done(r);
      if (r.resourceType() === "fetch" || r.resourceType() === "xhr") schedule(page, 500, false);
    });
    page.on("requestfailed", done);
    page.on("load", () => schedule(page));
    page.on("framenavigated", (frame) => {
      if (frame !== page.mainFrame()) return;
      w.navigations++;
      schedule(page);
    });
    page.on("close", () => {
      if (w.timer) clearTimeout(w.timer);
      pages.delete(page);
    });
    const close = page.close.bind(page);
    page.close = async (...args: Parameters<Page["close"]>) => {
      await enqueue(page);
      w.closing = true;
      return close(...args);
    };
  };

  const watchContext = (context: BrowserContext) => {
    context.on("page", watchPage);
    for (const page of context.pages()) watchPage(page);
    const newPage = context.newPage.bind(context);
    context.newPage = async () => {
      const page = await newPage();
      watchPage(page);
      return page;
    };
    const close = context.close.bind(context);
    context.close = async (...args: Parameters<BrowserContext["close"]>) => {
      await Promise.all(context.pages().map((p) => enqueue(p)));
      return close(...args);
    };
  };

  const newContext = browser.newContext.bind(browser);
  // Browser.newPage makes its context through this.newContext, so its pages are watched too.
  browser.newContext = async (...args: Parameters<Browser["newContext"]>) => {
    const context = await newContext(...args);
    watchContext(context);
    return context;
  };

  const flush = async () => {
    await Promise.all([...pages].filter((p) => !p.isClosed()).map((p) => enqueue(p)));
  };
  auditFlushers.set(browser, flush);
  const close = browser.close.bind(browser);
  browser.close = async (...args: Parameters<Browser["close"]>) => {
    await flush();
    auditFlushers.delete(browser);
    if (log) appendFileSync(log, `${JSON.stringify({ spent })}\n`);
    return close(...args);
  };

  const handle: PageAudit = {
    flush,
    found: () => auditFindings.filter((f) => f.browser === browser),
    take: async () => {
      await flush();
      const mine = auditFindings.filter((f) => f.browser === browser);
      for (const f of mine) auditFindings.splice(auditFindings.indexOf(f), 1);
      return mine;
    },
    spent: () => ({ ...spent }),
  };
  audits.set(browser, handle);
  return handle;
}
