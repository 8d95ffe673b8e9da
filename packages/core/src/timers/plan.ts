import type { WaitConfig } from "../versions/graph";
import { dueInstant, isValidZone, spreadOffsetSeconds, type WaitRule } from "./schedule";

export interface TimerPlan {
  rule: WaitRule;
  zone: string;
  /** Where the zone came from, for the timeline: the run's data, the node's fixed zone, or UTC. */
  zoneSource: "run" | "node" | "default";
  spreadSeconds: number;
  spreadOffsetSeconds: number;
  anchorAt: Date;
  dueAt: Date;
}

/** Reads "input.a.b" from the run input (the leading "input" names the input itself). */
function readPath(value: unknown, path: string): unknown {
  let v = value;
  for (const part of path.split(".").slice(1)) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** The contact's zone from the run when it is a valid IANA zone, else the node's fixed zone, else UTC. */
export function zoneFor(config: Pick<WaitConfig, "zone" | "zoneFrom">, input: unknown): { zone: string; source: TimerPlan["zoneSource"] } {
  const fromRun = config.zoneFrom ? readPath(input, config.zoneFrom) : undefined;
  if (typeof fromRun === "string" && isValidZone(fromRun)) return { zone: fromRun, source: "run" };
  if (config.zone) return { zone: config.zone, source: "node" };
  return { zone: "UTC", source: "default" };
}

/** A wait's timer: pure, from the node's config, the run, and the database's now(). */
export function timerFor(config: WaitConfig, runId: string, input: unknown, now: Date): TimerPlan {
  const { zone, source } = zoneFor(config, input);
  return instantFor({ rule: config.rule, zone, spreadSeconds: config.spreadSeconds, runId, anchorAt: now }, source);
}

/** Recomputes the instant from the stored intent: the same anchor, so only zone or rule changes move it. */
export function instantFor(
  t: { rule: WaitRule; zone: string; spreadSeconds: number; runId: string; anchorAt: Date },
  zoneSource: TimerPlan["zoneSource"] = "node",
): TimerPlan {
  const offset = spreadOffsetSeconds(t.runId, t.spreadSeconds);
  const due = dueInstant(t.rule, t.zone, t.anchorAt);
  return {
    rule: t.rule,
    zone: t.zone,
    zoneSource,
    spreadSeconds: t.spreadSeconds,
    spreadOffsetSeconds: offset,
    anchorAt: t.anchorAt,
    dueAt: new Date(due.getTime() + offset * 1000),
  };
}
