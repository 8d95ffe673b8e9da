import type { Db } from "@holdfast/db";
import { HoldfastError } from "../../base/errors";
import { type DeliveryRow, triggerDeliveriesInsertBySlug } from "../../store/sql/trigger-deliveries";
import { SignatureError } from "./signature";

/**
 * The trigger panel's delivery log: what each request to a trigger URL came to, in plain words. Accepted and
 * repeated deliveries are written by startRun in the start's own statement (store/sql/trigger-deliveries.ts); refusals are
 * written here by the HTTP edge once the URL's organisation is known (an unknown automation writes nothing).
 */

/** Every this many deliveries of an automation (in this process), the insert also prunes its old rows. */
export const pruneEvery = 8;
const deliveriesSincePrune = new Map<string, number>();

/**
 * Whether this delivery's insert should prune (every `pruneEvery`th per automation and process, the first included).
 * Decided here rather than in SQL: a prune branch in every statement is planned every time even when it does not
 * run. An automation so holds at most 50 + 7 rows per web process between prunes. Keyed by the URL's organisation
 * and automation slug, known for refusals and starts alike; forgotten wholesale past 10,000 keys (a reset only
 * delays each automation's next prune by up to `pruneEvery` deliveries).
 */
export function pruneDue(orgId: string, automationSlug: string): boolean {
  const key = `${orgId}/${automationSlug}`;
  const n = deliveriesSincePrune.get(key) ?? 0;
  if (deliveriesSincePrune.size >= 10_000 && n === 0) deliveriesSincePrune.clear();
  deliveriesSincePrune.set(key, (n + 1) % pruneEvery);
  return n === 0;
}

/** HTTP statuses of the two outcomes that start (or find) a run. */
export const deliveryStatus = { accepted: 202, duplicate: 200 } as const;

/** What the trigger route knows about a request before it starts anything: never its body. */
export interface DeliveryFacts {
  contentType: string | null;
  /** Bytes of the raw body; null when it was refused as too large without declaring its length. */
  bodyBytes: number | null;
}

/**
 * The media type as a short token (`application/json`), or null: the header is the sender's text and is stored
 * even for refusals, so only a well-formed type of at most 100 characters is kept, never parameters or free text.
 */
export function deliveryContentType(header: string | null): string | null {
  const type = (header ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,49}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,49}$/.test(type) ? type : null;
}

/** Codes thrown only after the request's credential was checked: its webhook-id is the sender's, so it is kept. */
const afterAuthentication = new Set(["no_published_version", "missing_start_key", "invalid_graph", "automation_paused", "automation_archived"]);

export function authenticatedRefusal(code: string): boolean {
  return afterAuthentication.has(code);
}

/**
 * A refusal's reason for the log, in a few plain words. Fixed sentences only: nothing the sender wrote ends up here
 * (a refused request may be anyone's).
 */
export function refusalReason(error: unknown): string {
  if (error instanceof SignatureError) return error.reason;
  if (!(error instanceof HoldfastError)) return "internal error (see the web server's log)";
  switch (error.code) {
    case "invalid_json":
      return "body is not JSON or form data";
    case "invalid_payload":
      // Fixed texts of payload.ts and start-run.ts ("the body must be a JSON object", "... cannot be stored").
      return error.message.replace(/^the /, "");
    case "missing_start_key":
      return `repeats cannot be told apart: ${error.message}`;
    case "no_published_version":
      return "the automation is a draft: publish it first";
    case "automation_paused":
      return "automation is paused: refused with Retry-After, the sender should send it again later";
    case "automation_archived":
      return "automation is archived: refused (410 Gone)";
    case "invalid_graph":
      return "the published version cannot be started (see the web server's log)";
    default:
      return error.message;
  }
}

const clip = (s: string | null, n: number) => (s === null ? null : s.slice(0, n));

/**
 * Writes a refused delivery of `automationSlug` in the organisation (nothing when there is no such automation).
 * Never the body; the webhook-id only when the request had passed its credential check.
 */
export async function recordRefusedDelivery(
  db: Db,
  r: { orgId: string; automationSlug: string; status: number; code: string; reason: string; webhookId: string | null } & DeliveryFacts,
): Promise<boolean> {
  const row: DeliveryRow = {
    outcome: "refused",
    status: r.status,
    reason: clip(r.reason, 500),
    startKey: null,
    webhookId: authenticatedRefusal(r.code) ? clip(r.webhookId, 300) : null,
    runId: null,
    contentType: r.contentType,
    bodyBytes: r.bodyBytes === null ? null : Math.min(r.bodyBytes, 2_147_483_647),
  };
  return triggerDeliveriesInsertBySlug(db, r.orgId, r.automationSlug, row, pruneDue(r.orgId, r.automationSlug));
}
