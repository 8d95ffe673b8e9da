import { z } from "zod";
import { isValidZone, type WaitRule, waitRuleSchema } from "./wait-rule";
import { defineStepKind } from "./kind";
import { durationWords, listWords, weekdayNames } from "./words";

export const notAZone = (zone: string) => `"${zone}" is not a time zone (use an IANA name such as Europe/Berlin)`;
export const ianaZone = z.string().refine(isValidZone, { error: (issue) => notAZone(String(issue.input)) });

export const waitConfig = z
  .object({
    rule: waitRuleSchema,
    /** A fixed IANA zone; also the fallback when `zoneFrom` finds no valid zone on the run. */
    zone: ianaZone.optional(),
    /** Where the contact's zone is on the run: a dotted path into the input, e.g. "input.contact.timezone". */
    zoneFrom: z.string().regex(/^input(\.[A-Za-z0-9_-]+)+$/, "a path starting with input.").optional(),
    /** Deterministic spread for human schedules: hash(run id) mod spreadSeconds. 0 = off. */
    spreadSeconds: z.number().int().min(0).max(86_400).default(0),
  })
  .strict()
  .refine((c) => c.rule.kind === "duration" || c.zone !== undefined || c.zoneFrom !== undefined, {
    message: "a wait until a time of day needs a time zone: pick one, or where the contact's zone is in the payload",
    path: ["zone"],
  });
export type WaitConfig = z.infer<typeof waitConfig>;

/** The rule as words: "until 09:00 on the next weekday". */
export function ruleWords(rule: WaitRule): string {
  switch (rule.kind) {
    case "duration":
      return `for ${durationWords(rule.seconds)}`;
    case "next_weekday":
      return `until ${rule.at} on the next weekday`;
    case "next_weekdays":
      return `until ${rule.at} on the next ${listWords([...rule.days].sort().map((d) => weekdayNames[d - 1] as string))}`;
    case "local_datetime":
      return `until ${rule.at.replace("T", " ")}`;
  }
}

/** Where the zone comes from, as words: "in the contact's time zone (input.tz), else Europe/Berlin". */
export function zoneWords(c: Pick<WaitConfig, "zone" | "zoneFrom">): string {
  if (c.zoneFrom) return `in the contact's time zone (${c.zoneFrom})${c.zone ? `, else ${c.zone}` : ""}`;
  return c.zone ? `in ${c.zone}` : "";
}

export const wait = defineStepKind({
  kind: "wait",
  label: "Wait",
  icon: "◷",
  description: "Waits a while, or until a time of day in the contact's time zone; needs no machine while it waits.",
  group: "Waits",
  inline: false,
  lane: "human",
  effect: false,
  waits: true,
  config: waitConfig,
  defaults: { rule: { kind: "next_weekday", at: "09:00" }, zone: "Europe/Berlin" },
  fields: [
    { name: "rule", label: "Wait", required: true, widget: { type: "wait-rule" } },
    {
      name: "zoneFrom",
      label: "Contact's time zone from",
      help: "The payload field holding the contact's time zone (such as Europe/Berlin). When a run has none, or an invalid one, the zone below is used.",
      widget: { type: "payload-path", prefix: "input." },
      showIf: { field: "rule.kind", in: ["next_weekday", "next_weekdays", "local_datetime"] },
    },
    {
      name: "zone",
      label: "Time zone",
      help: "The zone when the contact's is unknown (or always, when no field is picked above).",
      widget: { type: "zone" },
      showIf: { field: "rule.kind", in: ["next_weekday", "next_weekdays", "local_datetime"] },
    },
    {
      name: "spreadSeconds",
      label: "Spread over",
      help: "Spreads the runs due at the same moment over this long (each run keeps its own fixed delay), so 10,000 emails do not leave in one second.",
      advanced: true,
      widget: { type: "duration", min: 0, max: 86_400 },
    },
  ],
  outputs: null,
  output: [],
  summary: (c) => `Wait ${ruleWords(c.rule)}${c.rule.kind === "duration" ? "" : ` ${zoneWords(c)}`}`.trim(),
});
