import { z } from "zod";
import { defineInlineKind } from "./kind";

/** The run's start: a webhook delivery (JSON or form data). How duplicates are recognised is its start key. */
export const triggerConfig = z
  .object({
    /** Dotted path into the JSON body naming the provider's event id; used when no webhook-id header is sent. */
    eventIdField: z.string().min(1).max(200).optional(),
    /** Fall back to a hash of the payload: two identical submissions then collapse into one run. */
    payloadHashFallback: z.boolean().default(false),
    /** Dotted path to the contact's email in the body: the run's contact is resolved (or created) from it. */
    contactEmailField: z.string().min(1).max(200).default("email"),
    /** Dotted path to the contact's IANA time zone, kept on a new contact. */
    contactTimeZoneField: z.string().min(1).max(200).optional(),
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
  defaults: { eventIdField: "id", payloadHashFallback: false, contactEmailField: "email" },
  fields: [
    {
      name: "eventIdField",
      label: "Event id field",
      help: "Deliveries with a webhook-id header are told apart by it. Without one, this field of the body names the event: a second delivery with the same value returns the first run instead of starting another. Empty: a delivery without webhook-id is refused (or hashed, below).",
      widget: { type: "payload-path", prefix: "" },
    },
    {
      name: "payloadHashFallback",
      label: "Treat identical submissions as one",
      help: "When neither a webhook-id header nor the event id field is there, identical bodies start one run (a person submitting the same form twice gets one email). Off: such deliveries are refused, so nothing is started twice by accident.",
      widget: { type: "boolean" },
    },
    {
      name: "contactEmailField",
      label: "Contact's email field",
      help: "Where the contact's email is in the body. The run's contact (consent, suppression, time zone) is found or created from it.",
      required: true,
      widget: { type: "payload-path", prefix: "" },
    },
    {
      name: "contactTimeZoneField",
      label: "Contact's time zone field",
      help: "Where the contact's time zone (such as Europe/Berlin) is in the body; kept on a new contact.",
      widget: { type: "payload-path", prefix: "" },
    },
  ],
  outputs: null,
  output: [],
  summary: (c) =>
    `Webhook; duplicates by webhook-id${c.eventIdField ? `, else ${c.eventIdField}` : ""}${c.payloadHashFallback ? ", else identical body" : ""}`,
});
