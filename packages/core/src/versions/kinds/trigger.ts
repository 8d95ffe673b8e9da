import { z } from "zod";
import { declaredFieldsSchema, keptKeyOf, mergeSamples, sampleFromFields } from "./declared-fields";
import { defineInlineKind } from "./kind";

/** The run's start: a webhook delivery (JSON or form data). How duplicates are recognised is its start key. */
export const triggerConfig = z
  .object({
    /** Dotted path into the JSON body naming the provider's event id; used when no webhook-id header is sent. */
    eventIdField: z.string().min(1).max(200).optional(),
    /** Signed senders: fall back to identical submissions (below) when there is no id. URL-token triggers always do. */
    payloadHashFallback: z.boolean().default(false),
    /**
     * Identical submissions (no webhook-id, no event id): the same run only within this many hours of the first one
     * with that content (decided by the database clock); 0: every submission starts a new run. Absent: 24 hours.
     */
    duplicateWindowHours: z.number().min(0).max(8760).optional(),
    /** Dotted path to the contact's email in the body: the run's contact is resolved (or created) from it. */
    contactEmailField: z.string().min(1).max(200).default("email"),
    /** Dotted path to the contact's IANA time zone, kept on a new contact. */
    contactTimeZoneField: z.string().min(1).max(200).optional(),
    /**
     * The fields the form sends (versions/kinds/declared-fields.ts): offered by the variable picker before any delivery; the
     * ones with the email and time-zone roles take the place of the two paths above (contactPaths), the name, company
     * and kept fields are kept on the contact.
     */
    fields: declaredFieldsSchema.optional(),
    /** A sample payload typed in (no delivery needed); the declared fields' examples fill in what it leaves out. */
    sample: z
      .record(z.string(), z.unknown())
      .refine((s) => JSON.stringify(s).length <= 20_000, "keep the sample under 20,000 characters")
      .optional(),
  })
  .strict();
export type TriggerConfig = z.infer<typeof triggerConfig>;

export const trigger = defineInlineKind({
  kind: "trigger",
  label: "Webhook trigger",
  icon: "⚡",
  description: "Starts a run when a form, a provider or a script posts to the automation's URL.",
  group: "Start",
  inline: true,
  config: triggerConfig,
  defaults: { eventIdField: "id", payloadHashFallback: false, duplicateWindowHours: 24, contactEmailField: "email" },
  fields: [
    {
      name: "eventIdField",
      label: "Event id field",
      help: "A field your form tool fills with a new value for each submission (such as id, submission_id or response_id). A second delivery with the same value is the same submission sent again: it gets the first run, nobody gets a second email. When a delivery has no such value, identical submissions are compared instead (below).",
      widget: { type: "id-field" },
    },
    {
      name: "payloadHashFallback",
      label: "Treat identical submissions as one",
      help: "For signed senders (a form tool's URL with its token always does this): when a delivery has neither a webhook-id header nor the id field, identical submissions start one run. Off: such signed deliveries are refused, so nothing is started twice by accident.",
      widget: { type: "boolean" },
    },
    {
      name: "duplicateWindowHours",
      label: "Identical submissions count as one for (hours)",
      help: "An identical submission within 24 hours (or the hours set here) is the same lead: it gets the first run, nobody gets a second email. After that it starts a new run. Set 0 hours to treat every submission as new.",
      widget: { type: "number", min: 0, max: 8760, step: 1, unit: "hours" },
    },
    {
      name: "fields",
      label: "Fields the form sends",
      help: "Name each field as the form tool sends it, with an example. Steps can use them at once (input.<name>); say which is the contact's email, time zone, name and company: the name, the company and the fields marked \"keep\" are kept on the contact (contact.name, contact.company, contact.<name>).",
      widget: { type: "declared-fields" },
    },
    {
      name: "contactEmailField",
      label: "Contact's email field",
      help: "Where the contact's email is in the body. The run's contact (consent, suppression, time zone) is found or created from it. Declaring the form's fields above replaces this.",
      required: true,
      widget: { type: "payload-path", prefix: "", placeholder: "email" },
      showIf: { field: "fields", in: [undefined] },
    },
    {
      name: "contactTimeZoneField",
      label: "Contact's time zone field",
      help: "Where the contact's time zone (such as Europe/Berlin) is in the body; kept on a new contact. Declaring the form's fields above replaces this.",
      widget: { type: "payload-path", prefix: "", placeholder: "timezone (holding e.g. Europe/Berlin)" },
      showIf: { field: "fields", in: [undefined] },
    },
    {
      name: "sample",
      label: "Sample submission",
      help: "What one submission looks like, typed as JSON, to try the journey before any delivery. Left empty, the fields' examples make the sample; a real delivery's payload adds to it.",
      advanced: true,
      widget: { type: "json" },
    },
  ],
  outputs: null,
  output: [],
  summary: (c) =>
    `Webhook; a repeat is known by webhook-id${c.eventIdField ? ` or ${c.eventIdField}` : ""}${c.duplicateWindowHours === 0 ? "; form posts without one are each new" : `; a form post without one, by an identical submission within ${c.duplicateWindowHours ?? 24} h`}`,
});

/**
 * The trigger's own sample: the declared fields' examples, with the sample typed in over them (null: neither).
 * A delivery's payload, when the automation has one, goes over this (mergeSamples).
 */
export function declaredSample(c: Pick<TriggerConfig, "fields" | "sample">): Record<string, unknown> | null {
  if (!c.fields?.length && !c.sample) return null;
  return mergeSamples(sampleFromFields(c.fields), c.sample ?? {}) as Record<string, unknown>;
}

/** The contact keys the trigger keeps (name, company, the kept fields), with their labels and examples. */
export function keptContactKeys(c: Pick<TriggerConfig, "fields">): { key: string; label: string; example?: string }[] {
  return (c.fields ?? []).flatMap((f) => {
    const key = keptKeyOf(f);
    return key ? [{ key, label: f.role === "other" ? f.name : f.role, ...(f.example ? { example: f.example } : {}) }] : [];
  });
}
