import { z } from "zod";
import { defineStepKind } from "./kind";

/** Upserts a CRM record whose external id is the effect key; field values are templates. */
export const crmUpsertConfig = z
  .object({
    connection: z.string().min(1).max(100),
    object: z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, "a CRM object name: lowercase letters, digits, _"),
    fields: z.record(z.string().min(1).max(100), z.string().max(10_000)).refine((f) => Object.keys(f).length > 0, "at least one field"),
    maxAttempts: z.number().int().min(1).max(20).optional(),
  })
  .strict();

export const crmUpsert = defineStepKind({
  kind: "crm_upsert",
  label: "Update CRM",
  icon: "☰",
  description: "Creates or updates one CRM record for the run.",
  group: "Actions",
  inline: false,
  lane: "io",
  effect: true,
  waits: false,
  config: crmUpsertConfig,
  defaults: { connection: "", object: "contact", fields: { email: "{{contact.email}}" } },
  fields: [
    { name: "connection", label: "CRM", required: true, widget: { type: "connection", kind: "crm" } },
    { name: "object", label: "Record type", help: "The CRM's object name, such as contact or deal.", required: true, widget: { type: "text", format: "slug" } },
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
  summary: (c) => `Update ${c.object}: ${Object.keys(c.fields).join(", ")}`,
});
