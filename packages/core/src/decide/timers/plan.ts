import type { WaitConfig } from "../../versions/graph";
import { dueInstant, isValidZone, spreadOffsetSeconds, type WaitRule } from "./schedule";

export interface TimerPlan {
  rule: WaitRule;
  zone: string;
  /** Where the zone came from, for the timeline: the run's data, the contact's stored zone, the node's fixed zone, or UTC. */
  zoneSource: "run" | "contact" | "node" | "default";
  /** The payload named a zone that is not an IANA zone: what it said (the run's timeline warns, naming the fallback). */
  unknownZone?: string;
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

export interface ZoneChoice {
  zone: string;
  source: TimerPlan["zoneSource"];
  /** The payload's zone field held this, which is not an IANA zone (never silently UTC: the run says so). */
  unknown?: string;
}

/**
 * The zone a wait counts in: the payload's zone field (zoneFrom) when it is an IANA zone; else the contact's stored
 * zone; else the node's fixed zone; else UTC. A wait without zoneFrom uses its fixed zone first, then the contact's.
 * A payload zone that is not a zone is reported, with the fallback used.
 */
export function zoneFor(config: Pick<WaitConfig, "zone" | "zoneFrom">, input: unknown, contactZone: string | null = null): ZoneChoice {
  const fromRun = config.zoneFrom ? readPath(input, config.zoneFrom) : undefined;
  if (typeof fromRun === "string" && isValidZone(fromRun)) return { zone: fromRun, source: "run" };
  const unknown = typeof fromRun === "string" && fromRun.trim() !== "" ? { unknown: fromRun.slice(0, 100) } : {};
  const contact = contactZone && isValidZone(contactZone) ? contactZone : null;
  // A wait that reads the zone from the payload wants the person's zone: the contact's stored one comes next. A wait
  // without zoneFrom whose author fixed a zone meant that zone.
  if (config.zoneFrom && contact) return { zone: contact, source: "contact", ...unknown };
  if (config.zone) return { zone: config.zone, source: "node", ...unknown };
  if (contact) return { zone: contact, source: "contact", ...unknown };
  return { zone: "UTC", source: "default", ...unknown };
}

/** Words for the timeline: where a wait's zone came from. */
export function zoneSourceWords(source: TimerPlan["zoneSource"]): string {
  switch (source) {
    case "run":
      return "the trigger's data";
    case "contact":
      return "the contact's stored time zone";
    case "node":
      return "the wait's own time zone";
    case "default":
      return "UTC (no time zone was known)";
  }
}

/** A wait's timer: pure, from the node's config, the run, the contact's stored zone, and the database's now(). */
export function timerFor(config: WaitConfig, runId: string, input: unknown, now: Date, contactZone: string | null = null): TimerPlan {
  const choice = zoneFor(config, input, contactZone);
  const plan = instantFor({ rule: config.rule, zone: choice.zone, spreadSeconds: config.spreadSeconds, runId, anchorAt: now }, choice.source);
  return choice.unknown === undefined ? plan : { ...plan, unknownZone: choice.unknown };
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
