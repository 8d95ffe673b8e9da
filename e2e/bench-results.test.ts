import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The benchmark's pages stay pages for readers and its dated results stay data: docs/performance.md and
 * docs/scaling.md at most 300 lines, every bench/results/*.json a measurement with its date, machine and figures,
 * listed once in bench/results/README.md, and every results file a page names exists.
 */

const repo = resolve(import.meta.dirname, "..");
const resultsDir = join(repo, "bench/results");
const files = readdirSync(resultsDir).filter((f) => f.endsWith(".json"));
const log = readFileSync(join(resultsDir, "README.md"), "utf8");

interface Section {
  heading: string;
  notes?: string[];
  tables?: { columns: string[]; rows: unknown[] }[];
}

describe("bench results and the pages that read them", () => {
  it("keeps docs/performance.md and docs/scaling.md to at most 300 lines", () => {
    for (const page of ["docs/performance.md", "docs/scaling.md"]) {
      const lines = readFileSync(join(repo, page), "utf8").split("\n").length;
      expect(lines, page).toBeLessThanOrEqual(301);
    }
  });

  it("has results files, each a dated measurement with its machine and figures", () => {
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const r = JSON.parse(readFileSync(join(resultsDir, file), "utf8")) as Record<string, unknown>;
      expect(typeof r.title, file).toBe("string");
      expect(r.date, file).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(file.startsWith(r.date as string), `${file} starts with its date`).toBe(true);
      expect(typeof r.machine, file).toBe("string");
      const sections = r.sections as Section[];
      expect(Array.isArray(sections) && sections.length > 0, file).toBe(true);
      for (const s of sections) expect(Boolean(s.notes?.length || s.tables?.length), `${file}: ${s.heading}`).toBe(true);
    }
  });

  it("lists every results file once in bench/results/README.md, and no other", () => {
    const listed = [...log.matchAll(/^\| `([^`]+\.json)` \|/gm)].map((m) => m[1]);
    expect([...listed].sort()).toEqual([...files].sort());
  });

  it("names only results files that exist, in docs/ and the README", () => {
    const pages = [...readdirSync(join(repo, "docs")).map((f) => join("docs", f)), "README.md"].filter((f) => f.endsWith(".md"));
    for (const page of pages) {
      const text = readFileSync(join(repo, page), "utf8");
      for (const m of text.matchAll(/(\d{4}-\d{2}-\d{2}-\d{4}-[\w-]+\.json)/g)) {
        expect(existsSync(join(resultsDir, m[1] as string)), `${page} names bench/results/${m[1]}`).toBe(true);
      }
    }
  });
});
