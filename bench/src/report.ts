import { perStep, type Quantiles, type RaceResult } from "./result";

export const fmt = (n: number | undefined, d = 0) => (n !== undefined && Number.isFinite(n) ? n.toFixed(d) : "-");
const q = (x: Quantiles | null, d = 1) => (x ? `${fmt(x.p50, d)}/${fmt(x.p99, d)}` : "-");

const columns: [string, number, (r: RaceResult) => string][] = [
  ["system, scenario", 38, (r) => r.label],
  ["runs/s", 7, (r) => fmt(r.runsPerSec, 1)],
  ["steps/s", 8, (r) => fmt(r.stepsPerSec)],
  ["run ms p50/p99", 15, (r) => q(r.latencyMs, 0)],
  ["1st step ms p50/p99", 20, (r) => q(r.firstDispatchMs) + (r.dispatchClock === "process" ? "*" : "")],
  ["commit/st", 9, (r) => fmt(perStep(r).commits, 2)],
  ["wrote/st", 8, (r) => fmt(perStep(r).writeCommits, 2)],
  ["WAL B/st", 8, (r) => fmt(perStep(r).walBytes)],
  ["srv WAL", 8, (r) => fmt(perStep(r).walBytesServer)],
  ["node ms/st", 10, (r) => fmt(perStep(r).nodeMs, 2)],
  ["pg ms/st", 8, (r) => fmt(perStep(r).pgMs, 2)],
  ["lost/dup", 8, (r) => `${r.lost}/${r.duplicated}`],
  ["load", 9, (r) => `${fmt(r.measured.load.start, 1)}-${fmt(r.measured.load.end, 1)}`],
];

export const raceHeader = () => columns.map(([h, w], i) => (i === 0 ? h.padEnd(w) : h.padStart(w))).join(" ");
export const raceRow = (r: RaceResult) => columns.map(([, w, f], i) => (i === 0 ? f(r).padEnd(w) : f(r).padStart(w))).join(" ");

/** CPU ms per step of every measured process: Node by process, PostgreSQL backends by application_name. */
export function cpuLines(results: RaceResult[]): string[] {
  return results.map((r) => {
    const s = perStep(r);
    const node = Object.entries(s.node).map(([k, v]) => `${k} ${fmt(v, 3)}${r.systemNode.includes(k) ? "" : " (outside)"}`);
    const pg = Object.entries(s.pg)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${fmt(v, 3)}`);
    return `  ${r.label.padEnd(38)} node: ${node.join(", ")}\n  ${"".padEnd(38)} postgres: ${pg.join(", ")}`;
  });
}

/** The median item by `key` (for an even count, the lower of the middle two: every median the bench prints is an item). */
export function medianBy<T>(items: readonly T[], key: (item: T) => number): T | undefined {
  const sorted = [...items].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}
const median = (xs: number[]) => medianBy(xs, (x) => x) ?? Number.NaN;

/**
 * Holdfast against each peer in one scenario: the ratio of steps/s within each round (both rows ran minutes apart on
 * the same machine), and the median of the rounds, which the target is judged on; with the same for steps per CPU
 * second, which moves far less with the machine's load than steps/s does.
 */
const cpu = (r: RaceResult) => perStep(r).nodeMs + perStep(r).pgMs;

/** Holdfast's main rows paired with a peer's of the same round in one scenario, and the ratios of each pair. */
function roundPairs(results: RaceResult[], scenario: RaceResult["scenario"], peer: RaceResult["system"]) {
  const ours = results.filter((r) => r.system === "Holdfast" && r.scenario === scenario && r.round !== undefined);
  const pairs = ours.flatMap((o) => {
    const p = results.find((r) => r.system === peer && r.scenario === scenario && r.round === o.round);
    return p ? [[o, p] as const] : [];
  });
  return { pairs, ratios: pairs.map(([o, p]) => o.stepsPerSec / p.stepsPerSec), cpuRatios: pairs.map(([o, p]) => cpu(p) / cpu(o)) };
}

/** Holdfast over a peer in one scenario, median of the rounds: steps/s, and steps per CPU second (node + postgres). */
export function raceRatio(results: RaceResult[], scenario: RaceResult["scenario"], peer: RaceResult["system"]) {
  const { pairs, ratios, cpuRatios } = roundPairs(results, scenario, peer);
  return pairs.length ? { steps: median(ratios), cpu: median(cpuRatios), rounds: pairs.length } : undefined;
}

export function ratioLines(results: RaceResult[], targets: Record<string, Record<string, number>>): string[] {
  const lines: string[] = [];
  for (const scenario of ["http", "noop"] as const) {
    const peers = [...new Set(results.filter((r) => r.system !== "Holdfast" && r.scenario === scenario && r.round !== undefined).map((r) => r.system))];
    for (const peer of peers) {
      const { pairs, ratios, cpuRatios } = roundPairs(results, scenario, peer);
      if (!pairs.length) continue;
      const ratio = median(ratios);
      const target = targets[scenario]?.[peer];
      const each = pairs.length > 1 ? ` (rounds: ${pairs.map(([o, p], i) => `${fmt(o.stepsPerSec)}/${fmt(p.stepsPerSec)} = ${fmt(ratios[i], 2)}x`).join(", ")})` : "";
      lines.push(
        `  (${scenario === "http" ? "a" : "b"}) ${scenario.padEnd(5)} Holdfast/${peer.padEnd(15)} ` +
          (pairs.length > 1 ? `median of ${pairs.length} rounds ${fmt(ratio, 2)}x${each}` : `${fmt(pairs[0]?.[0].stepsPerSec)}/${fmt(pairs[0]?.[1].stepsPerSec)} = ${fmt(ratio, 2)}x`) +
          (target ? ` (target >= ${target}x: ${ratio >= target ? "met" : "not met"})` : "") +
          `; steps per CPU second (node + postgres): ${pairs.length > 1 ? "median " : ""}${fmt(median(cpuRatios), 2)}x` +
          (pairs.length > 1 ? ` (rounds: ${cpuRatios.map((c) => `${fmt(c, 2)}x`).join(", ")})` : ` (${pairs.map(([o, p]) => `${fmt(cpu(o), 2)} vs ${fmt(cpu(p), 2)}`).join("")} ms a step)`),
      );
    }
  }
  return lines;
}
