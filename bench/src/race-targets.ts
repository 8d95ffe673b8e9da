// The race's rows of the targets table (targets.ts): WAL a step, the ratios against the peers (steps/s and steps per
// CPU second), Holdfast's share of the database's limit (one commit a step, and 32 steps a commit), commits a step,
// first-step dispatch at half peak and 0 lost / 0 duplicated. Pure: it reads the race's results.
import { cpus } from "node:os";
import type { measureLimit } from "./limit";
import { fmt, medianBy, raceRatio } from "./report";
import { perStep, type RaceResult } from "./result";
import { bounded, type Target } from "./targets";

export type LimitRow = Awaited<ReturnType<typeof measureLimit>> & { round: number; batch: number };

/** Holdfast http's steps/s over the database's limit measured at the end of the same round, median of the rounds. */
export function limitShare(results: readonly RaceResult[], limits: readonly LimitRow[], batch: number) {
  const rounds = limits
    .filter((l) => l.batch === batch)
    .flatMap((l) => {
      const ours = results.find((r) => r.system === "Holdfast" && r.scenario === "http" && r.round === l.round);
      return ours ? [{ round: l.round, share: (100 * ours.stepsPerSec) / l.stepsPerSec, ours: ours.stepsPerSec, limit: l.stepsPerSec }] : [];
    });
  const mid = medianBy(rounds, (x) => x.share);
  return mid ? { ...mid, rounds } : undefined;
}

/**
 * The first-step target is for a quiet machine: nothing running but the bench, whose own rows keep a machine's load
 * average at one to two and a half times its cores (2-5 on two cores). Above three times its cores, something else is
 * running too, and the row says so.
 */
const busyLoad = 3 * cpus().length;

export function raceTargets(results: RaceResult[], limits: readonly LimitRow[], mainRow: (scenario: RaceResult["scenario"]) => RaceResult | undefined): Target[] {
  const targets: Target[] = [];
  for (const [scenario, bound] of [
    ["http", 1_500],
    ["noop", 1_000],
  ] as const) {
    const row = mainRow(scenario);
    targets.push(bounded(`WAL a step at peak, ${scenario}`, "<=", bound, row && perStep(row).walBytes, " B", 0, "(median round, full-page images in)"));
  }
  const ratio = (scenario: RaceResult["scenario"], peer: RaceResult["system"]) => raceRatio(results, scenario, peer);
  const rounds = (r: ReturnType<typeof ratio>) => (r ? `(median of ${r.rounds} round${r.rounds > 1 ? "s" : ""})` : "");
  const http = { dbos: ratio("http", "DBOS"), graphile: ratio("http", "graphile-worker") };
  const noop = ratio("noop", "DBOS");
  targets.push(
    bounded("(a) http steps/s, Holdfast / DBOS", ">=", 2, http.dbos?.steps, "x", 2, rounds(http.dbos)),
    bounded("(a) http steps/s, Holdfast / graphile-worker", ">=", 2.5, http.graphile?.steps, "x", 2, rounds(http.graphile)),
    bounded("(a) http steps per CPU second, Holdfast / DBOS", ">=", 2, http.dbos?.cpu, "x", 2, rounds(http.dbos)),
    bounded("(b) noop steps/s, Holdfast / DBOS", ">=", 1.5, noop?.steps, "x", 2, rounds(noop)),
    bounded("(b) noop steps per CPU second, Holdfast / DBOS", ">=", 2, noop?.cpu, "x", 2, rounds(noop)),
  );
  for (const batch of [1, 32]) {
    const s = limitShare(results, limits, batch);
    targets.push(
      bounded(
        `Holdfast http / database limit, ${batch === 1 ? "one commit a step" : `${batch} steps a commit`}`,
        ">=",
        60,
        s?.share,
        "%",
        1,
        s ? `(${fmt(s.ours)} / ${fmt(s.limit)} steps/s, pgbench)` : "",
      ),
    );
  }
  const peak = mainRow("http");
  targets.push(bounded("commits a step at peak, http", "<=", 0.3, peak && perStep(peak).commits, "", 2));
  const half = results.find((r) => r.label.includes("half peak") && !r.label.includes("queue only"));
  const first = half?.firstFromCommitMs ?? half?.firstDispatchMs ?? undefined;
  const load = half?.measured.load.start;
  const quiet = load !== undefined && load <= busyLoad;
  const firstTarget = bounded(
    "first-step dispatch p99 at half peak (quiet machine)",
    "<=",
    10,
    first?.p99,
    " ms",
    1,
    half
      ? `(${half.firstFromCommitMs ? "from the start's commit" : "from the start's transaction"}; load ${fmt(load, 1)} at the row's start${quiet ? "" : `: machine not quiet, above ${busyLoad}`})`
      : "",
  );
  targets.push(firstTarget, bounded("chained-step dispatch p99 at half peak", "<=", 0, half?.chainedDispatchMs?.p99, " ms", 1));
  const lost = results.reduce((a, r) => a + r.lost, 0);
  const dup = results.reduce((a, r) => a + r.duplicated, 0);
  targets.push({ what: "race: lost / duplicated steps, every row", target: "0 / 0", figure: `${lost} / ${dup}`, met: lost === 0 && dup === 0 });
  return targets;
}
