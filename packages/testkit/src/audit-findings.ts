/**
 * What the page audit (page-audit.ts) found in the browsers of this test file, and how to finish the audits still
 * to run. A module with no imports: the setup file page-audit-gate.ts reads it in every test file without loading
 * Playwright or axe.
 */
export interface AuditFinding {
  /** The page's address when it was audited. */
  url: string;
  kind: "axe" | "word";
  /** axe: the rule id (e.g. "select-name"); word: the forbidden word found. */
  rule: string;
  /** axe: critical, serious, moderate or minor; a forbidden word counts as serious. */
  impact: string;
  /** axe: the target selector and axe's one-line summary; word: the text around it. */
  detail: string;
  /** The browser whose page it was (a test of the audit takes its own findings back). */
  browser: object;
}

export const auditFindings: AuditFinding[] = [];

/** One per open browser: audits every open page not audited in its present state, and waits for those under way. */
export const auditFlushers = new Map<object, () => Promise<void>>();

/** Critical and serious findings fail the test file; moderate and minor ones are only reported. */
export const failsTheFile = (f: AuditFinding): boolean => f.impact === "critical" || f.impact === "serious";

const order = ["word", "critical", "serious", "moderate", "minor"];
const rank = (f: AuditFinding) => order.indexOf(f.kind === "word" ? "word" : f.impact);

/** Words first, then axe findings by impact; one entry per page, rule and element. */
export function describeFindings(findings: readonly AuditFinding[], max = 60): string {
  const sorted = [...findings].sort((a, b) => rank(a) - rank(b));
  const lines = sorted.slice(0, max).map((f) =>
    f.kind === "axe" ? `- ${f.url}\n  axe ${f.rule} (${f.impact}): ${f.detail}` : `- ${f.url}\n  the word "${f.rule}" in the page text: …${f.detail}…`,
  );
  if (findings.length > max) lines.push(`… and ${findings.length - max} more`);
  return lines.join("\n");
}
