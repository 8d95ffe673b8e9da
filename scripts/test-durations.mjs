// Writes .ci/test-durations.json (each test file's seconds in one run) from a vitest JSON report, for the test
// sequencer (packages/testkit/src/sequencer.ts), which starts the longest files first so both workers end together.
// Refresh it from a run on a CI-like machine when files are added or their lengths change a lot:
//   pnpm vitest run --reporter=default --reporter=json --outputFile.json=/tmp/report.json
//   node scripts/test-durations.mjs /tmp/report.json
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const report = process.argv[2];
if (!report) {
  console.error("usage: node scripts/test-durations.mjs <vitest json report>");
  process.exit(2);
}
const { testResults } = JSON.parse(readFileSync(report, "utf8"));
const durations = Object.fromEntries(
  testResults
    .map((r) => [relative(root, r.name), Math.round((r.endTime - r.startTime) / 100) / 10])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(join(root, ".ci/test-durations.json"), `${JSON.stringify(durations, null, 1)}\n`);
console.log(`wrote .ci/test-durations.json: ${Object.keys(durations).length} files, ${Math.round(Object.values(durations).reduce((a, b) => a + b, 0))} s in all`);
