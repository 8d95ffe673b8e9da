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

/** Holdfast against each peer in one scenario: the ratio of steps/s, with the target where the issue sets one. */
export function ratioLines(results: RaceResult[], targets: Record<string, Record<string, number>>): string[] {
  const lines: string[] = [];
  for (const scenario of ["http", "noop"] as const) {
    const ours = results.find((r) => r.system === "Holdfast" && r.scenario === scenario && r.inFlight !== null);
    if (!ours) continue;
    for (const peer of results.filter((r) => r.system !== "Holdfast" && r.scenario === scenario)) {
      const ratio = ours.stepsPerSec / peer.stepsPerSec;
      const target = targets[scenario]?.[peer.system];
      // CPU per step moves far less with the machine's load than steps/s does: the same ratio as steps per CPU second.
      const cpu = (r: RaceResult) => perStep(r).nodeMs + perStep(r).pgMs;
      lines.push(
        `  (${scenario === "http" ? "a" : "b"}) ${scenario.padEnd(5)} Holdfast/${peer.system.padEnd(15)} ${fmt(ours.stepsPerSec)}/${fmt(peer.stepsPerSec)} = ${fmt(ratio, 2)}x` +
          (target ? ` (target >= ${target}x: ${ratio >= target ? "met" : "not met"})` : "") +
          `; steps per CPU second (node + postgres): ${fmt(cpu(peer) / cpu(ours), 2)}x (${fmt(cpu(ours), 2)} vs ${fmt(cpu(peer), 2)} ms a step)`,
      );
    }
  }
  return lines;
}
