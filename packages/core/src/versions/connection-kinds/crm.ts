import { z } from "zod";
import { defineConnectionKind, httpUrl } from "./kind";

const url = httpUrl();

/** A CRM connection: its API base URL; the API token is the encrypted secret (sent as a bearer token). */
export const crmConnectionConfig = z
  .object({
    baseUrl: z
      .string()
      .trim()
      .min(1, "is required")
      .refine((v) => url(v) === true, "must be a web address starting with https://"),
    timeoutMs: z.number().int("must be a whole number of milliseconds").min(100, "must be at least 100").max(120_000, "must be at most 120000 (2 minutes)").default(15_000),
  })
  .strict();
export type CrmConnectionConfig = z.infer<typeof crmConnectionConfig>;

export const crmKind = defineConnectionKind({
  kind: "crm",
  label: "CRM",
  description: "Creates and updates records (contacts, deals ...) in your CRM through its REST API.",
  config: crmConnectionConfig,
  defaults: { baseUrl: "", timeoutMs: 15_000 },
  fields: [
    { name: "baseUrl", label: "API base URL", required: true, help: "The address of the CRM's API, e.g. https://api.yourcrm.com/v2.", widget: { type: "text", format: "url", placeholder: "https://api.yourcrm.com/v2" } },
    { name: "timeoutMs", label: "Timeout (milliseconds)", help: "How long one call may take.", advanced: true, widget: { type: "number", min: 100, max: 120_000, step: 500, unit: "ms" } },
  ],
  secret: { label: "API token", help: "An API token of the CRM account, sent as a bearer token.", required: true },
  summary: (c) => c.baseUrl,
});
