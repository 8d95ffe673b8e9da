import { createHash, randomUUID } from "node:crypto";
import { HoldfastError } from "../../base/errors";
import { canonicalJson } from "../../base/json";
import type { TriggerConfig } from "../../versions/graph";

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

/** How senders authenticate (automations.trigger_auth): a form tool's URL token, or a Standard Webhooks signature. */
export type TriggerMode = "signed" | "url_token";

/** Identical submissions are the same lead within this many hours of the first, unless the trigger says otherwise. */
export const defaultDuplicateWindowHours = 24;

export interface StartKeyPlan {
  /** The run's start key (automation-scoped); for a windowed key, its first generation. */
  key: string;
  /**
   * An identical-submission key: a delivery with it is the same run only while that run (the newest generation of
   * the key, `key`, `key:2`, `key:3`, ...) started less than this many hours ago by the database clock; after that it
   * starts the next generation (store/sql/runs.ts runsInsertWithinWindow). Absent: the key is the same run for ever.
   */
  windowHours?: number;
}

type KeyRules = Pick<TriggerConfig, "eventIdField" | "payloadHashFallback"> & { duplicateWindowHours?: number | undefined };

/**
 * The start key names the event that started a run, so that every delivery of that event finds the same run.
 * Preference: the provider's delivery id (webhook-id), then the configured event-id field of the body, then a hash
 * of the submission with a window (identical submissions within it are one lead). A form tool (URL-token mode) cannot
 * send webhook-id, so there the hash is the default; a signed sender falls back to it only when the trigger opts in
 * (payloadHashFallback), else the delivery is refused. Window 0: every such submission is new (a fresh key).
 * Keys are scoped to the automation: one event may start runs of two automations.
 */
export function planStartKey(automationId: string, trigger: KeyRules, source: StartKeySource, mode: TriggerMode = "signed"): StartKeyPlan {
  const plan = keyFrom(trigger, source, mode);
  if (plan.key.length > 300) throw new MissingStartKeyError("the event id is longer than 300 characters");
  return { ...plan, key: `${automationId}:${plan.key}` };
}

/** The start key alone (a windowed one as its first generation): see planStartKey. */
export function resolveStartKey(automationId: string, trigger: KeyRules, source: StartKeySource, mode: TriggerMode = "signed"): string {
  return planStartKey(automationId, trigger, source, mode).key;
}

function keyFrom(trigger: KeyRules, source: StartKeySource, mode: TriggerMode): StartKeyPlan {
  if (source.webhookId) return { key: `wh:${source.webhookId}` };
  const hashes = mode === "url_token" || trigger.payloadHashFallback;
  if (trigger.eventIdField) {
    const value = readDotted(source.body, trigger.eventIdField);
    if (typeof value === "string" && value.length > 0) return { key: `ev:${value}` };
    if (typeof value === "number" && Number.isFinite(value)) return { key: `ev:${value}` };
    if (!hashes) {
      throw new MissingStartKeyError(`send a webhook-id header or a non-empty "${trigger.eventIdField}" in the body`);
    }
  }
  if (hashes) {
    const hash = `sha256:${createHash("sha256").update(canonicalJson(source.body)).digest("hex")}`;
    const windowHours = trigger.duplicateWindowHours ?? defaultDuplicateWindowHours;
    // Window 0: every submission is new, so each gets a key nothing else has.
    if (windowHours === 0) return { key: `${hash}:new:${randomUUID()}` };
    return { key: hash, windowHours };
  }
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
