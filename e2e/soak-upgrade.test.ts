import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureWebBuilt, repoRoot, runSoakCli } from "@holdfast/testkit";
import { expect, it } from "vitest";

/**
 * The rolling upgrade under traffic, small (`pnpm soak --upgrade-from <release.json's previousRelease> --runs 200`):
 * the previous release, built from its own sources at that commit (its web build is kept under
 * ~/.cache/holdfast/releases/<commit> for the next run), runs every process kind on a database its CLI migrated;
 * under load this checkout's `holdfast migrate` applies and each process is replaced by this checkout's, one at a
 * time (the web behind its front). Fails when a run is lost or doubled, a provider acted twice for one key, the old
 * processes broke on the new schema or did not stop cleanly, or the doctor finds anything. Needs this checkout's web
 * build, like e2e/soak.test.ts.
 */
const runs = Number(process.env.SOAK_RUNS ?? 200);
const seed = Number(process.env.SOAK_SEED ?? randomInt(1, 2 ** 31 - 1));
const from = (JSON.parse(readFileSync(join(repoRoot, "release.json"), "utf8")) as { previousRelease: string }).previousRelease;

interface Result {
  ok: boolean;
  invariants: { name: string; figure: string; violations: string[] }[];
  figures: { runs: number } | null;
  upgrade: {
    from: string;
    replacements: { label: string; kind: string; oldExit: { code: number | null; signal: string | null } }[];
    oldOnNewSchema: { deliveriesAcked: number; runsEnded: number };
    answered503: number;
    refusedConnections: number;
    oldOwnExits: unknown[];
  } | null;
  error?: string;
}

it(`upgrade soak: ${runs} runs while every process of ${from.slice(0, 12)} is replaced by this checkout's (seed ${seed})`, async () => {
  await ensureWebBuilt();
  const args = ["--upgrade-from", from, "--runs", String(runs), "--seed", String(seed), "--rate", "2.5", "--upgrade-hold", "5", "--drain-seconds", "240", "--max-seconds", "1500"];
  const { code, result } = await runSoakCli<Result>(args);
  expect(result.error).toBeUndefined();
  const u = result.upgrade;
  expect(u?.from).toBe(from);
  // Every kind replaced, every old process stopped by its SIGTERM (exit 0, or 143 for next start; not killed after the grace), none died by itself.
  expect(new Set(u?.replacements.map((r) => r.kind))).toEqual(new Set(["web", "relay", "engine", "sweeper", "lane-worker", "mail-in"]));
  expect(u?.replacements.filter((r) => ![0, 143].includes(r.oldExit.code ?? -1) && r.oldExit.signal !== "SIGTERM")).toEqual([]);
  expect(u?.oldOwnExits).toEqual([]);
  // The old release worked on the new schema: its web acknowledged deliveries and its workers ended runs.
  expect(u?.oldOnNewSchema.deliveriesAcked).toBeGreaterThan(0);
  expect(u?.oldOnNewSchema.runsEnded).toBeGreaterThan(0);
  expect(result.figures?.runs).toBe(runs);
  // 0 lost, 0 doubled, each provider acted on once per key, the doctor clean: each broken invariant shows what broke it.
  expect(result.invariants.filter((i) => i.violations.length > 0)).toEqual([]);
  expect(result.invariants.length).toBeGreaterThanOrEqual(10);
  expect(result.ok).toBe(true);
  expect(code).toBe(0);
}, 30 * 60_000);
