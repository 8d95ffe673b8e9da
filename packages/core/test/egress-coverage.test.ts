import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * No outbound call may bypass the egress guard: outside packages/core/src/providers/net/, no code in packages/core/src or
 * apps/{app}/src calls fetch, makes a nodemailer transport or a Slack client, or opens sockets or HTTP requests
 * itself. Test code and the web app's own routes (apps/web/src/app, which serve requests) are not scanned.
 */
const root = join(import.meta.dirname, "../../..");
const guard = "packages/core/src/providers/net/";

const forbidden: [RegExp, string][] = [
  [/(?<![\w$])fetch\s*\(/, "fetch( (use guardedFetch from net/fetch)"],
  [/\bcreateTransport\s*\(/, "createTransport( (use smtpTransport / egressSmtpTransport)"],
  [/\bnew\s+[\w.]*WebClient\s*\(/, "new WebClient( (use slackClient, which passes the guarded fetch)"],
  [/\bnew\s+(?:[\w.]*\.)?App\s*\(/, "new App( (Bolt)"],
  [/\b(?:net|tls|http|https)\.(?:connect|createConnection|request|get)\s*\(/, "a socket or request opened directly"],
  [/from\s+["'](?:undici|axios|got|node-fetch|request-filtering-agent)["']/, "an HTTP client"],
  [/from\s+["']nodemailer["']/, "nodemailer"],
];

/** What may be imported from the socket and HTTP modules without opening a connection (helpers, servers, types). */
const harmless = new Set(["isIP", "isIPv4", "isIPv6", "createServer", "Server", "STATUS_CODES", "IncomingMessage", "ServerResponse", "AddressInfo", "METHODS"]);
const socketModule = /^\s*import\s+(?!type\b)(.+?)\s+from\s+["'](?:node:)?(net|tls|http|https|http2|dgram)["']/;

/** A value import of a socket or HTTP module that could open a connection: a namespace, a default, or a client name. */
function socketImport(line: string): string | null {
  const m = socketModule.exec(line);
  if (!m) return null;
  const [, clause = "", module] = m;
  const names = /\{([^}]*)\}/.exec(clause)?.[1];
  const outside = clause.replace(/\{[^}]*\}/, "").replace(/,/g, "").trim();
  const risky = (names ?? "")
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n && !n.startsWith("type "))
    .map((n) => n.split(/\s+as\s+/)[0] as string)
    .filter((n) => !harmless.has(n));
  if (outside || risky.length) return `node:${module} (${[outside, ...risky].filter(Boolean).join(", ")})`;
  return null;
}

/** Files allowed one of the patterns above, and what they must contain to show they go through the guard. */
const exceptions: Record<string, { patterns: string[]; mustContain: string[] }> = {
  // slackClient builds the WebClient with the guard's fetch (its undici dispatcher checks every address).
  "packages/core/src/providers/connections/slack-client.ts": { patterns: ["new WebClient( (use slackClient, which passes the guarded fetch)"], mustContain: ["fetch: (egress ? egressFetch(egress) : guardedFetch)"] },
};

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === ".next" || name === "generated") continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name) && !/\.test\.|\.spec\./.test(name)) out.push(path);
  }
  return out;
}

function scanned(): string[] {
  const apps = readdirSync(join(root, "apps")).map((a) => join(root, "apps", a, "src"));
  return [join(root, "packages/core/src"), ...apps]
    .filter((d) => statSync(d, { throwIfNoEntry: false })?.isDirectory())
    .flatMap(sources)
    .map((p) => relative(root, p))
    .filter((p) => !p.startsWith(guard) && !p.startsWith("apps/web/src/app/"));
}

describe("every outbound connection goes through the egress guard", () => {
  it("no transport is used outside packages/core/src/net", () => {
    const files = scanned();
    expect(files.length).toBeGreaterThan(50);
    const found: string[] = [];
    for (const file of files) {
      const lines = readFileSync(join(root, file), "utf8").split("\n");
      lines.forEach((line, i) => {
        const code = line.trim();
        if (code.startsWith("//") || code.startsWith("*") || code.startsWith("/*")) return;
        const hits = forbidden.filter(([pattern]) => pattern.test(line)).map(([, what]) => what);
        const imported = socketImport(line);
        if (imported) hits.push(imported);
        for (const what of hits) if (!exceptions[file]?.patterns.includes(what)) found.push(`${file}:${i + 1}: ${what}`);
      });
    }
    expect(found).toEqual([]);
  });

  it("the files allowed a transport use the guard's adapter with it", () => {
    for (const [file, { mustContain }] of Object.entries(exceptions)) {
      const text = readFileSync(join(root, file), "utf8");
      for (const s of mustContain) expect(text, `${file} must contain ${s}`).toContain(s);
    }
  });
});
