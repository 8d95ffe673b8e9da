import { z } from "zod";
import { defineStepKind } from "./kind";

/** Drafts text with the organisation's model endpoint; at most 2 attempts (each one costs). */
export const modelDraftConfig = z
  .object({
    connection: z.string().min(1).max(100),
    prompt: z.string().min(1).max(50_000),
    system: z.string().max(20_000).optional(),
    maxTokens: z.number().int().min(1).max(32_000).default(800),
    temperature: z.number().min(0).max(2).optional(),
    maxAttempts: z.number().int().min(1).max(2).optional(),
  })
  .strict();

export const modelDraft = defineStepKind({
  kind: "model_draft",
  label: "Draft with AI",
  icon: "✍",
  description: "Writes text (an email, a summary) with an AI model, within the organisation's model budget.",
  group: "Actions",
  inline: false,
  lane: "slow",
  effect: true,
  waits: false,
  config: modelDraftConfig,
  defaults: { connection: "", prompt: "Write a short, friendly follow-up email to {{contact.email}}." },
  fields: [
    { name: "connection", label: "Model", required: true, widget: { type: "connection", kind: "model" } },
    { name: "prompt", label: "What to write", help: "The instruction; use variables for what the model should know.", required: true, widget: { type: "template", multiline: true } },
    { name: "system", label: "Tone and rules", help: "Optional standing instructions (the system prompt).", advanced: true, widget: { type: "template", multiline: true } },
    { name: "maxTokens", label: "Longest answer", advanced: true, widget: { type: "number", min: 1, max: 32_000, unit: "tokens" } },
    { name: "temperature", label: "Creativity (0-2)", advanced: true, widget: { type: "number", min: 0, max: 2, step: 0.1 } },
    { name: "maxAttempts", label: "Attempts (at most 2: each costs)", advanced: true, widget: { type: "number", min: 1, max: 2 } },
  ],
  outputs: null,
  output: [
    { path: "text", label: "Drafted text" },
    { path: "model", label: "Model used" },
  ],
  maxAttempts: (c) => c.maxAttempts,
  summary: (c) => `Draft: "${c.prompt.length > 48 ? `${c.prompt.slice(0, 47)}…` : c.prompt}"`,
});
