import { join, relative } from "node:path";
import type { TestSpecification, Vitest } from "vitest/node";
import { describe, expect, it } from "vitest";
import LongestFirstSequencer, { committedDurations } from "../src/sequencer";

const repoRoot = join(import.meta.dirname, "../../..");
const project = { name: "", config: { sequence: { groupOrder: 0 }, isolate: true } };
const spec = (file: string) => ({ moduleId: join(repoRoot, file), project }) as unknown as TestSpecification;

/** The sequencer over real files, with vitest's results cache answering from `cached` (seconds; failed when negative). */
function sequencer(cached: Record<string, number> = {}) {
  const ctx = {
    config: { root: repoRoot },
    cache: {
      getTestSpecificationResult: (s: TestSpecification) => {
        const seconds = cached[relative(repoRoot, s.moduleId)];
        return seconds === undefined ? undefined : { duration: Math.abs(seconds) * 1000, failed: seconds < 0 };
      },
    },
  } as unknown as Vitest;
  return new LongestFirstSequencer(ctx);
}

describe("the test order: longest first", () => {
  const committed = committedDurations();
  const known = Object.entries(committed).sort(([, a], [, b]) => b - a);

  it("starts the files .ci/test-durations.json says are longest first, a file it does not know before all", async () => {
    expect(known.length).toBeGreaterThan(100);
    const [longest, second] = known;
    const short = known.at(-1);
    const files = [short?.[0], second?.[0], longest?.[0]] as string[];
    const unknown = "packages/testkit/src/sequencer.ts";
    expect(committed[unknown]).toBeUndefined();
    const order = await sequencer().sort([...files, unknown].map(spec));
    expect(order.map((s) => relative(repoRoot, s.moduleId))).toEqual([unknown, longest?.[0], second?.[0], short?.[0]]);
  });

  it("prefers this checkout's last run to the committed list, and starts a file that failed there first", async () => {
    const [longest] = known;
    const files = [longest?.[0] as string, "packages/testkit/test/app-entry.test.ts", "packages/testkit/test/sequencer.test.ts"];
    const order = await sequencer({ [files[0] as string]: 1, [files[1] as string]: 50, [files[2] as string]: -2 }).sort(files.map(spec));
    expect(order.map((s) => relative(repoRoot, s.moduleId))).toEqual([files[2], files[1], files[0]]);
  });
});
