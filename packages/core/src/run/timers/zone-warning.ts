import type { RunEventRow } from "../../store/sql/run-events";
import { type TimerPlan, zoneSourceWords } from "../../decide/timers/plan";

/**
 * The run's timeline warning for a payload zone that is not an IANA zone: what it said and which zone the wait used
 * instead, in words (never a silent UTC).
 */
export function unknownZoneEvent(
  base: Pick<RunEventRow, "orgId" | "runId" | "worker">,
  stepId: string,
  nodeId: string,
  timer: Pick<TimerPlan, "zone" | "zoneSource" | "unknownZone">,
): RunEventRow {
  const message =
    `The trigger's time zone "${timer.unknownZone}" is not a time zone; the wait counts in ${timer.zone} ` +
    `(${zoneSourceWords(timer.zoneSource)}) instead. Fix the zone in the sending form or set the contact's time zone in Settings.`;
  return {
    ...base,
    type: "timer.zone_unknown",
    stepId,
    nodeId,
    data: { given: timer.unknownZone ?? null, fallback: timer.zone, fallbackSource: timer.zoneSource, message },
  };
}
