import { createHash } from "node:crypto";
import { HoldfastError } from "../errors";
import { canonicalJson } from "../json";
import type { TriggerConfig } from "../versions/graph";

export { canonicalJson };

export class MissingStartKeyError extends HoldfastError {
  constructor(detail: string) {
    super("missing_start_key", detail);
  }
}

export interface StartKeySource {
  /** Standard Webhooks `webhook-id` header, when sent. */
  webhookId: string | null;
  body: unknown;
}

/**
 * The start key names the event that started a run, so that every delivery of that event finds the same run.
 * Preference: the provider's delivery id (webhook-id), then the configured event-id field of the body, then (only
 * when the trigger opts in) a hash of the payload, which merges two genuinely separate but identical submissions.
 * Keys are scoped to the automation: one event may start runs of two automations.
 */
export function resolveStartKey(automationId: string, trigger: Pick<TriggerConfig, "eventIdField" | "payloadHashFallback">, source: StartKeySource): string {
  const key = keyFrom(trigger, source);
  if (key.length > 300) throw new MissingStartKeyError("the event id is longer than 300 characters");
  return `${automationId}:${key}`;
}

function keyFrom(trigger: Pick<TriggerConfig, "eventIdField" | "payloadHashFallback">, source: StartKeySource): string {
  if (source.webhookId) return `wh:${source.webhookId}`;
  if (trigger.eventIdField) {
    const value = readDotted(source.body, trigger.eventIdField);
    if (typeof value === "string" && value.length > 0) return `ev:${value}`;
    if (typeof value === "number" && Number.isFinite(value)) return `ev:${value}`;
    if (!trigger.payloadHashFallback) {
      throw new MissingStartKeyError(`send a webhook-id header or a non-empty "${trigger.eventIdField}" in the body`);
    }
  }
  if (trigger.payloadHashFallback) return `sha256:${createHash("sha256").update(canonicalJson(source.body)).digest("hex")}`;
  throw new MissingStartKeyError("send a webhook-id header (Standard Webhooks) so repeated deliveries start one run");
}

export function readDotted(value: unknown, path: string): unknown {
  let v = value;
  for (const part of path.split(".")) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}
