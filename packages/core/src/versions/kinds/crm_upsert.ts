import { z } from "zod";
import { defineStepKind } from "./kind";

/**
 * Creates or updates the CRM record named by `matchKey` (a template: the contact's email by default, or an id from
 * the payload such as `{{input.customer_id}}`), so every run about one person updates that person's record. The
 * effect key stays the call's idempotency key (a repeat of one run's call is answered, not applied twice). Field
 * values are templates.
 */
export const crmUpsertConfig = z
  .object({
    connection: z.string().min(1).max(100),
    object: z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, "a CRM object name: lowercase letters, digits, _"),
    matchKey: z.string().trim().min(1, "say which value identifies the record, such as {{contact.email}}").max(1_000).default("{{contact.email}}"),
    fields: z.record(z.string().min(1).max(100), z.string().max(10_000)).refine((f) => Object.keys(f).length > 0, "at least one field"),
    maxAttempts: z.number().int().min(1).max(20).optional(),
  })
  .strict();

export const crmUpsert = defineStepKind({
  kind: "crm_upsert",
  label: "Update CRM",
  icon: "☰",
  description: "Creates or updates the CRM record of the person (or thing) the run is about.",
  group: "Actions",
  inline: false,
  lane: "io",
  effect: true,
  waits: false,
  config: crmUpsertConfig,
  defaults: { connection: "", object: "contact", matchKey: "{{contact.email}}", fields: { email: "{{contact.email}}" } },
  fields: [
    { name: "connection", label: "CRM", required: true, widget: { type: "connection", kind: "crm" } },
    { name: "object", label: "Record type", help: "The CRM's object name, such as contact or deal.", required: true, widget: { type: "text", format: "slug" } },
    {
      name: "matchKey",
      label: "Match records by",
      help: "The value that identifies the record: runs with the same value update one record. Usually the contact's email; or an id from the payload, such as {{input.customer_id}}.",
      required: true,
      widget: { type: "template" },
    },
    {
      name: "fields",
      label: "Fields",
      help: "Each CRM field and the value to write; values may use variables.",
      required: true,
      widget: { type: "key-values", value: "template", keyLabel: "CRM field", valueLabel: "Value" },
    },
    { name: "maxAttempts", label: "Attempts before it fails", help: "Empty: the lane's policy.", advanced: true, widget: { type: "number", min: 1, max: 20 } },
  ],
  outputs: null,
  output: [{ path: "id", label: "Record id" }],
  maxAttempts: (c) => c.maxAttempts,
  summary: (c) => `Update the ${c.object} matched by ${c.matchKey === "{{contact.email}}" ? "the contact's email" : c.matchKey}: ${Object.keys(c.fields).join(", ")}`,
});
