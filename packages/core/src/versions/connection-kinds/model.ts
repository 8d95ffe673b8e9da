import { z } from "zod";
import { defineConnectionKind, httpUrl } from "./kind";

const url = httpUrl();
const price = "must be a price in US dollars per million tokens, 0 or more";

/** A model endpoint: an OpenAI-compatible chat-completions API, its prices, and the API key as the secret. */
export const modelConnectionConfig = z
  .object({
    /** The API base, e.g. https://api.openai.com/v1 (POST {baseUrl}/chat/completions). */
    baseUrl: z
      .string()
      .trim()
      .min(1, "is required")
      .refine((v) => url(v) === true, "must be a web address starting with https://"),
    model: z.string().trim().min(1, "is required").max(200, "is too long"),
    /** Prices in micros (millionths of a US dollar) per million tokens. */
    inputMicrosPerMTok: z.number(price).min(0, price),
    outputMicrosPerMTok: z.number(price).min(0, price),
    timeoutMs: z.number().int("must be a whole number of milliseconds").min(1_000, "must be at least 1000 (1 second)").max(300_000, "must be at most 300000 (5 minutes)").default(60_000),
  })
  .strict();
export type ModelConnectionConfig = z.infer<typeof modelConnectionConfig>;

const usd = (micros: number) => `$${(micros / 1e6).toFixed(micros % 10_000 === 0 ? 2 : 4)}`;

export const modelKind = defineConnectionKind({
  kind: "model",
  label: "AI model (OpenAI-compatible)",
  description: "Drafts text with a chat model through an OpenAI-compatible API (OpenAI, Azure OpenAI, Mistral, a model on your own server ...). Its prices count against the organisation's budget.",
  config: modelConnectionConfig,
  defaults: { baseUrl: "https://api.openai.com/v1", model: "", timeoutMs: 60_000 },
  fields: [
    { name: "baseUrl", label: "API base URL", required: true, help: "Usually ends in /v1. Drafts are posted to this address + /chat/completions.", widget: { type: "text", format: "url", placeholder: "https://api.openai.com/v1" } },
    { name: "model", label: "Model", required: true, help: "The model's name at this provider, e.g. gpt-4o-mini.", widget: { type: "text", placeholder: "gpt-4o-mini" } },
    {
      name: "inputMicrosPerMTok",
      label: "Price of input (US dollars per million tokens)",
      required: true,
      help: "From the provider's price list, such as 0.15 for $0.15 per million input tokens.",
      widget: { type: "number", min: 0, step: 0.0001, unit: "$ per million tokens", scale: 1_000_000 },
    },
    {
      name: "outputMicrosPerMTok",
      label: "Price of output (US dollars per million tokens)",
      required: true,
      help: "Such as 0.60 for $0.60 per million output tokens.",
      widget: { type: "number", min: 0, step: 0.0001, unit: "$ per million tokens", scale: 1_000_000 },
    },
    { name: "timeoutMs", label: "Timeout (milliseconds)", help: "How long one draft may take.", advanced: true, widget: { type: "number", min: 1_000, max: 300_000, step: 1_000, unit: "ms" } },
  ],
  secret: { label: "API key", help: "Sent as a bearer token. Leave empty only for a server of your own that needs no key.", required: false },
  summary: (c) => `${c.model} at ${c.baseUrl} (${usd(c.inputMicrosPerMTok)} in, ${usd(c.outputMicrosPerMTok)} out per million tokens)`,
});
