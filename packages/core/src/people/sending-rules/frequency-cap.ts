import { z } from "zod";
import type { SendHold, StepOutcome } from "../../base/outcome/outcome";

/**
 * The frequency cap (issue 44), pure: at most `count` emails to one address in any `periodHours`, across the
 * organisation's automations that are not transactional. The gate (frequency-cap-gate.ts) reads the address's
 * window under its lock and asks `capVerdict`; the words and outcomes of a capped send are made here.
 */
export const frequencyCapSchema = z
  .object({
    count: z.number({ message: "the number of emails is a number" }).int("a whole number of emails").min(1, "at least 1 email").max(100, "at most 100 emails"),
    periodHours: z
      .number({ message: "the period is a number of hours" })
      .int("a whole number of hours")
      .min(1, "a period of at least 1 hour")
      .max(720, "a period of at most 720 hours (30 days)"),
  })
  .strict();

export type FrequencyCap = z.infer<typeof frequencyCapSchema>;

/** The stored JSON as a cap; anything else (null, a shape this code does not know) is no cap. */
export function frequencyCapOf(stored: unknown): FrequencyCap | null {
  return frequencyCapSchema.safeParse(stored).data ?? null;
}

/**
 * - `retry`: this effect key is already counted (an earlier attempt of the same send): it goes ahead, counted once;
 * - `count`: under the cap: this send is counted and goes ahead;
 * - `capped`: the cap is reached without it.
 */
export type CapVerdict = "retry" | "count" | "capped";

export function capVerdict(cap: FrequencyCap, window: { thisKey: boolean | null; count: number }): CapVerdict {
  if (window.thisKey === true) return "retry";
  return window.count < cap.count ? "count" : "capped";
}

/** "24 hours", "7 days": whole days from two days on, as a person sets them. */
export function periodWords(hours: number): string {
  if (hours >= 48 && hours % 24 === 0) return `${hours / 24} days`;
  return hours === 1 ? "1 hour" : `${hours} hours`;
}

/** An instant in words, the same for every viewer: "2026-12-05 07:01 UTC". */
export const utcWords = (at: Date) => `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;

export interface CappedSend {
  cap: FrequencyCap;
  /** Sends to the address in the window, without this one. */
  count: number;
  /** The send whose leaving the window frees a place, and that instant (sent_at + period, by the database). */
  freeing: { sentAt: Date; automationName: string };
  allowedAt: Date;
  /** The database's clock when the window was read. */
  now: Date;
}

/** "frequency cap: at most 1 email per 24 hours to this address; one went out at 2026-12-05 07:01 UTC from "Welcome"". */
export function capWords(c: Pick<CappedSend, "cap" | "count" | "freeing">): string {
  const rule = `frequency cap: at most ${c.cap.count} email${c.cap.count === 1 ? "" : "s"} per ${periodWords(c.cap.periodHours)} to this address`;
  const at = `at ${utcWords(c.freeing.sentAt)} from ${JSON.stringify(c.freeing.automationName)}`;
  return c.count === 1 ? `${rule}; one went out ${at}` : `${rule}; ${c.count} went out in that time, the earliest that still counts ${at}`;
}

/**
 * What a capped send does, per its automation: `wait` holds the step (no attempt used) until the next instant the cap
 * allows; `skip` settles it as skipped, like a withdrawn consent, with the cap and the automation's choice in words.
 */
export function cappedOutcome(action: "wait" | "skip", to: string, c: CappedSend): StepOutcome {
  const words = capWords(c);
  if (action === "skip") {
    const reason = `${words}; this automation skips sends over the cap`;
    return {
      kind: "done",
      output: { skipped: true, reason, to, frequencyCap: { ...c.cap, sent: c.count, allowedAt: c.allowedAt.toISOString() } },
      skipped: { reason },
    };
  }
  const hold: SendHold = { rule: "frequency_cap", until: c.allowedAt.toISOString(), zone: null, zoneSource: null, words };
  const delayMs = Math.max(0, c.allowedAt.getTime() - c.now.getTime());
  return { kind: "defer", reason: `${words}; held until ${utcWords(c.allowedAt)}`, delayMs, hold };
}
