#!/usr/bin/env node
// Writes packages/testkit/src/test-durations.json (seconds per test file, what the test sequencer orders files by on a
// fresh clone: packages/testkit/src/sequencer.ts) from vitest's JSON report of a whole run:
//   pnpm vitest run --reporter=default --reporter=json --outputFile.json=/tmp/vitest.json
//   node scripts/test-durations.mjs /tmp/vitest.json
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const [report] = process.argv.slice(2);
if (!report) {
  console.error("usage: node scripts/test-durations.mjs <vitest JSON report>");
  process.exit(2);
}
const { testResults } = JSON.parse(readFileSync(report, "utf8"));
const seconds = Object.fromEntries(
  testResults
    .map((f) => [relative(root, f.name).split("\\").join("/"), Math.max(1, Math.round((f.endTime - f.startTime) / 1000))])
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
);
const out = join(root, "packages/testkit/src/test-durations.json");
writeFileSync(out, `${JSON.stringify(seconds, null, 2)}\n`);
const total = Object.values(seconds).reduce((a, b) => a + b, 0);
console.log(`${relative(root, out)}: ${Object.keys(seconds).length} files, ${total} s in all`);
