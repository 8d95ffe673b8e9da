import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The order test files start in: the longest first, so that the two workers end together (a long file started late
 * runs on alone while the other worker idles). A file's length is vitest's own record of its last run on this
 * machine when there is one (node_modules/.vite), else `test-durations.json` beside this file: seconds per file,
 * measured in a whole run (scripts/test-durations.mjs makes it from vitest's JSON report). A fresh clone (CI) has only
 * the second. A file in neither (a new one) goes first, among the unknowns by size, as vitest's own order does; a file
 * vitest remembers as failed goes before every other.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const recorded = readDurations();
    const unknown: TestSpecification[] = [];
    const known: { spec: TestSpecification; ms: number; failed: boolean }[] = [];
    for (const spec of files) {
      const cached = this.ctx.cache.getTestSpecificationResult(spec);
      const seconds = recorded[relative(this.ctx.config.root, spec.moduleId).split("\\").join("/")];
      const ms = cached?.duration ?? (seconds === undefined ? undefined : seconds * 1000);
      if (ms === undefined) unknown.push(spec);
      else known.push({ spec, ms, failed: cached?.failed ?? false });
    }
    known.sort((a, b) => Number(b.failed) - Number(a.failed) || b.ms - a.ms);
    return [...(await super.sort(unknown)), ...known.map((k) => k.spec)];
  }
}

function readDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(new URL("./test-durations.json", import.meta.url), "utf8")) as Record<string, number>;
  } catch {
    return {};
  }
}
