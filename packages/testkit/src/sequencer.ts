import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The order `vitest run` starts test files in: the longest first, so that the two workers finish together instead of
 * one running a long file alone at the end (longest-processing-time-first scheduling). A file's length is this
 * checkout's last run of it (vitest's results cache), else its line in `.ci/test-durations.json` (seconds, from a
 * CI-like run: `node scripts/test-durations.mjs <vitest json report>` writes it), else unknown: unknown files start
 * first, largest first, as vitest's own sequencer does. A file that failed in the last local run starts before all.
 */
const repoRoot = join(import.meta.dirname, "../../..");
export const durationsFile = join(repoRoot, ".ci/test-durations.json");

/** .ci/test-durations.json: seconds by file (relative to the repository), or nothing when it is missing. */
export function committedDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(durationsFile, "utf8")) as Record<string, number>;
  } catch {
    return {};
  }
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // vitest's order (failed, then longest by its cache, then largest) breaks ties and places unknown files.
    const base = await super.sort(files);
    const committed = committedDurations();
    const known = (spec: TestSpecification): number | undefined => {
      const cached = this.ctx.cache.getTestSpecificationResult(spec);
      if (cached) return cached.duration / 1000;
      return committed[relative(repoRoot, spec.moduleId)];
    };
    const failed = (spec: TestSpecification) => this.ctx.cache.getTestSpecificationResult(spec)?.failed === true;
    const rank = new Map(base.map((spec, i) => [spec, i]));
    return [...base].sort((a, b) => {
      if (failed(a) !== failed(b)) return failed(a) ? -1 : 1;
      const da = known(a);
      const db = known(b);
      if (da === undefined || db === undefined) {
        if (da !== db) return da === undefined ? -1 : 1;
      } else if (da !== db) return db - da;
      return (rank.get(a) ?? 0) - (rank.get(b) ?? 0);
    });
  }
}
