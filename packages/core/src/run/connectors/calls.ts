import type { ModelConnectionConfig } from "../../versions/connection-kinds/model";
import { renderTemplate, type TemplateContext } from "../../base/templates/render";
import type { crmUpsertConfig, modelDraftConfig } from "../../versions/graph";
import type { z } from "zod";

/**
 * What the CRM and model connectors send, built from a node's config and a run's template context: pure, so the
 * connectors (which then call) and the editor's preview (which never calls) build the same request.
 */

type CrmUpsert = Pick<z.output<typeof crmUpsertConfig>, "object" | "matchKey" | "fields">;
type ModelDraft = Pick<z.output<typeof modelDraftConfig>, "prompt" | "system" | "maxTokens" | "temperature">;

export const crmRecordsUrl = (baseUrl: string, object: string) => `${baseUrl.replace(/\/$/, "")}/objects/${encodeURIComponent(object)}/records`;

/** The record's external id (the match key as rendered) and its fields' values (throws TemplateError). */
export function renderCrmUpsert(config: CrmUpsert, context: TemplateContext): { externalId: string; fields: Record<string, string> } {
  return {
    externalId: renderTemplate(config.matchKey, context, "text").trim(),
    fields: Object.fromEntries(Object.entries(config.fields).map(([name, t]) => [name, renderTemplate(t, context, "text")])),
  };
}

/** The upsert call: `PUT {base}/objects/{object}/records/{externalId}` with `{ externalId, fields }`. */
export function crmUpsertCall(baseUrl: string, object: string, rendered: { externalId: string; fields: Record<string, string> }) {
  return { method: "PUT" as const, url: `${crmRecordsUrl(baseUrl, object)}/${encodeURIComponent(rendered.externalId)}`, body: rendered };
}

/** A draft's prompt and standing instructions as the model is given them (throws TemplateError). */
export function renderDraftPrompt(config: Pick<ModelDraft, "prompt" | "system">, context: TemplateContext): { prompt: string; system: string | undefined } {
  return {
    prompt: renderTemplate(config.prompt, context, "text"),
    system: config.system === undefined ? undefined : renderTemplate(config.system, context, "text"),
  };
}

/** The chat-completions call of a draft: `POST {base}/chat/completions`. */
export function chatCompletionsCall(model: Pick<ModelConnectionConfig, "baseUrl" | "model">, config: ModelDraft, rendered: { prompt: string; system: string | undefined }) {
  return {
    method: "POST" as const,
    url: `${model.baseUrl.replace(/\/$/, "")}/chat/completions`,
    body: {
      model: model.model,
      max_tokens: config.maxTokens,
      ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
      messages: [...(rendered.system !== undefined ? [{ role: "system", content: rendered.system }] : []), { role: "user", content: rendered.prompt }],
    },
  };
}
