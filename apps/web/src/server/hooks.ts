import { createLogger, HoldfastError, type Logger } from "@holdfast/core/base";
import { organisationsIdBySlug } from "@holdfast/core/store";
import { type DeliveryFacts, deliveryContentType, deliveryStatus, isDatabaseUnreachable, type OutageReporter, recordRefusedDelivery, refusalReason, type StartOptions, startRun, UnparsedBody, unavailableRetryAfterSeconds } from "@holdfast/core/run";
import { pausedRetryAfterSeconds } from "@holdfast/core/run";
import type { Db } from "@holdfast/db";
import { z } from "zod";
import { env } from "../env";
import { readBodyLimited } from "./body";
import { withScope } from "./scope";

/** Slugs as the trigger URL carries them; anything else cannot name an organisation or automation. */
const slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/);

export interface HookParams {
  orgSlug: string;
  automationSlug: string;
  /** The URL token, when the request came to /api/hooks/{org}/{automation}/{token}. */
  token?: string;
}

export interface HookOptions {
  maxBodyBytes?: number;
  log?: Logger;
  /** The process's outage watch: a lost database is logged there once per outage, not once per delivery. */
  outages?: OutageReporter;
  /** Announces a started run's first steps on Redis (startRun's `wake`). */
  wake?: StartOptions["wake"];
}

let defaultLog: Logger | undefined;

/**
 * Organisations' ids by slug, as the trigger URLs name them, per database handle: neither changes once made (no
 * rename, no deletion), so a process looks each one up once rather than with every delivery. Only ids the database
 * answered are kept, the first 10,000 slugs; one whose organisation or automation startRun cannot find is dropped and
 * looked up again.
 */
const orgIdsByDb = new WeakMap<Db, Map<string, string>>();
function orgIdsOf(db: Db) {
  let ids = orgIdsByDb.get(db);
  if (!ids) orgIdsByDb.set(db, (ids = new Map()));
  const kept = ids;
  return {
    get: (slug: string) => kept.get(slug),
    keep: (slug: string, id: string) => {
      if (kept.size < 10_000) kept.set(slug, id);
    },
    drop: (slug: string) => kept.delete(slug),
  };
}

/** HTTP status for each domain error code; anything not listed is an internal error. */
const statusByCode: Record<string, number> = {
  org_not_found: 404,
  automation_not_found: 404,
  no_published_version: 409,
  invalid_signature: 401,
  missing_start_key: 400,
  invalid_payload: 400,
  invalid_json: 400,
  invalid_graph: 500,
  // Paused: providers retry a 503 after Retry-After, so nothing is lost. Archived: 410 Gone tells a sender this
  // URL takes no more deliveries (some unsubscribe on it); restoring the automation needs the sender set up again.
  automation_paused: 503,
  automation_archived: 410,
};

/**
 * The trigger endpoint, as a plain function of (db, route params, request) so that tests drive it without Next.
 * Every refusal happens before or inside startRun's transaction, so a refused delivery starts nothing; once the
 * URL's organisation is known, each outcome is written to the automation's delivery log (an accepted or repeated
 * one by startRun with the run, a refusal here, without its body). While the database cannot be reached the answer
 * is 503 with Retry-After: senders retry later, and a delivery that did commit before the connection broke comes
 * back as a duplicate with its run.
 */
export async function handleHook(db: Db, params: HookParams, request: Request, options: HookOptions = {}): Promise<Response> {
  try {
    return await answerHook(db, params, request, options);
  } catch (error) {
    if (!isDatabaseUnreachable(error)) throw error;
    options.outages?.report(error);
    await request.body?.cancel().catch(() => {});
    return errorResponse(
      503,
      "database_unavailable",
      "the service cannot reach its database right now: send this delivery again later (one that was already stored comes back as a duplicate)",
      { "retry-after": String(unavailableRetryAfterSeconds) },
    );
  }
}

async function answerHook(db: Db, params: HookParams, request: Request, options: HookOptions): Promise<Response> {
  const maxBytes = options.maxBodyBytes ?? env.MAX_WEBHOOK_BYTES;
  const log = options.log ?? (defaultLog ??= createLogger("web", env.LOG_LEVEL));
  const org = await urlOrganisation(db, params, request);
  if (org instanceof Response) return org;
  const { orgId, orgIds } = org;
  // The web's database role sees an organisation's rows only inside its scope: a trigger request is scoped to the
  // organisation its URL names, and startRun refuses it unless it carries that automation's credential.
  return withScope({ orgIds: [orgId] }, async () => {
    const facts: DeliveryFacts = { contentType: deliveryContentType(request.headers.get("content-type")), bodyBytes: null };
    const refuse = refusalLogger(db, { orgId, params, request, facts, options, log });

    // The limit holds while streaming: a declared or actual size over it is refused before it is buffered.
    const read = await readBodyLimited(request, maxBytes);
    if (!read.ok) {
      const declared = Number(request.headers.get("content-length"));
      facts.bodyBytes = Number.isSafeInteger(declared) && declared > maxBytes ? declared : null;
      return refuse(read.response, "payload_too_large", `body larger than ${maxBytes} bytes`);
    }
    facts.bodyBytes = read.bytes.byteLength;
    const rawBody = read.text();

    try {
      return await startDelivery(db, params, request, rawBody, facts, options);
    } catch (error) {
      return startRefused(error, params, log, refuse, () => orgIds.drop(params.orgSlug));
    }
  });
}

/** The organisation the URL names (its id kept for the process), or the 404 that answers a URL naming none. */
async function urlOrganisation(db: Db, params: HookParams, request: Request): Promise<Response | { orgId: string; orgIds: ReturnType<typeof orgIdsOf> }> {
  if (!slug.safeParse(params.orgSlug).success) {
    return errorResponse(404, "org_not_found", `organisation "${clip(params.orgSlug)}" not found`);
  }
  if (!slug.safeParse(params.automationSlug).success) {
    return errorResponse(404, "automation_not_found", `automation "${clip(params.automationSlug)}" not found`);
  }
  const orgIds = orgIdsOf(db);
  const orgId = orgIds.get(params.orgSlug) ?? (await organisationsIdBySlug(db, params.orgSlug));
  if (!orgId) {
    await request.body?.cancel().catch(() => {});
    return errorResponse(404, "org_not_found", `organisation "${clip(params.orgSlug)}" not found`);
  }
  orgIds.keep(params.orgSlug, orgId);
  return { orgId, orgIds };
}

type Refuse = (response: Response, code: string, reason: string) => Promise<Response>;

/** Answers `response` after writing the refusal to the automation's delivery log (never the body). */
function refusalLogger(
  db: Db,
  o: { orgId: string; params: HookParams; request: Request; facts: DeliveryFacts; options: HookOptions; log: Logger },
): Refuse {
  return async (response, code, reason) => {
    try {
      await recordRefusedDelivery(db, {
        orgId: o.orgId,
        automationSlug: o.params.automationSlug,
        status: response.status,
        code,
        reason,
        webhookId: o.request.headers.get("webhook-id"),
        ...o.facts,
      });
    } catch (error) {
      // The log is for people configuring senders; failing to write it must not change the sender's answer.
      if (o.options.outages?.report(error)) return response;
      o.log.error({ err: error, orgSlug: o.params.orgSlug, automationSlug: o.params.automationSlug }, "delivery log write failed");
    }
    return response;
  };
}

/** Starts the run (or finds the delivery's earlier one): 202 accepted, 200 a duplicate. */
async function startDelivery(db: Db, params: HookParams, request: Request, rawBody: string, facts: DeliveryFacts, options: HookOptions): Promise<Response> {
  const outcome = await startRun(
    db,
    {
      orgSlug: params.orgSlug,
      automationSlug: params.automationSlug,
      rawBody,
      // Parsed (bounded: payload.ts) only once the credential passed: a sender without it costs no parsing.
      body: new UnparsedBody(request.headers.get("content-type")),
      headers: {
        "webhook-id": request.headers.get("webhook-id"),
        "webhook-timestamp": request.headers.get("webhook-timestamp"),
        "webhook-signature": request.headers.get("webhook-signature"),
      },
      via: "webhook",
      auth: { kind: "http", urlToken: params.token ?? null },
      delivery: facts,
    },
    options.wake ? { wake: options.wake } : {},
  );
  return Response.json({ runId: outcome.runId, duplicate: outcome.duplicate }, { status: outcome.duplicate ? deliveryStatus.duplicate : deliveryStatus.accepted });
}

/** A start that failed, as the sender's answer (written to the delivery log when there is one to write to). */
async function startRefused(error: unknown, params: HookParams, log: Logger, refuse: Refuse, forgetOrg: () => void): Promise<Response> {
  const status = error instanceof HoldfastError ? statusByCode[error.code] : undefined;
  if (error instanceof HoldfastError && status !== undefined) {
    // No such automation: there is no log to write to (and a typo'd URL writes nothing anywhere).
    if (error.code === "org_not_found" || error.code === "automation_not_found") {
      // The organisation's id is looked up again after either: none is renamed or deleted, but a kept id that
      // named no organisation any more would hide every automation of the slug's new one behind row-level security.
      forgetOrg();
      return errorResponse(status, error.code, error.message);
    }
    if (error.code === "invalid_graph") {
      // The published graph passed validation when it was published; failing now is a bug, not a bad request.
      log.error({ err: error, orgSlug: params.orgSlug, automationSlug: params.automationSlug }, "published graph failed to parse");
      return refuse(errorResponse(500, "invalid_graph", "the automation's published version cannot be started"), error.code, refusalReason(error));
    }
    const headers = error.code === "automation_paused" ? { "retry-after": String(pausedRetryAfterSeconds) } : undefined;
    return refuse(errorResponse(status, error.code, error.message, headers), error.code, refusalReason(error));
  }
  if (isDatabaseUnreachable(error)) throw error; // 503 above: no log line per delivery, no delivery-log write
  log.error({ err: error, orgSlug: params.orgSlug, automationSlug: params.automationSlug }, "webhook failed");
  return refuse(errorResponse(500, "internal", "internal error"), "internal", refusalReason(error));
}

export function errorResponse(status: number, code: string, message: string, headers?: HeadersInit): Response {
  return Response.json({ error: { code, message } }, { status, ...(headers ? { headers } : {}) });
}

function clip(value: string): string {
  return value.length > 64 ? `${value.slice(0, 64)}...` : value;
}
