import { afterAll } from "vitest";
import { auditFindings, auditFlushers, describeFindings, failsTheFile } from "./audit-findings";

/**
 * Vitest setup file: after a test file's own afterAll hooks (registered first, so it runs last), the pages of
 * browsers still open are audited, and the file fails when the page audit (page-audit.ts) recorded a critical or
 * serious axe violation or an engine-room word on any page it visited. The message names each page, rule or word,
 * and where.
 */
afterAll(async () => {
  await Promise.all([...auditFlushers.values()].map((flush) => flush().catch(() => undefined)));
  const failing = auditFindings.filter(failsTheFile);
  const minor = auditFindings.length - failing.length;
  auditFindings.length = 0;
  if (failing.length > 0) {
    throw new Error(
      `The page audit found ${failing.length} problem(s) on pages this file's browser tests visited (docs/testing.md, "Every page is audited"):\n${describeFindings(failing)}${minor ? `\n(and ${minor} moderate or minor axe finding(s), not failing)` : ""}`,
    );
  }
});
