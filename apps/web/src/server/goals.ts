import { HoldfastError } from "@holdfast/core/base";
import { deliverGoal, isDatabaseUnreachable, unavailableRetryAfterSeconds } from "@holdfast/core/run";
import { organisationsIdBySlug } from "@holdfast/core/store";
import type { Db } from "@holdfast/db";
import { z } from "zod";
import { env } from "../env";
import { readBodyLimited } from "./body";
import { errorResponse, type HookParams } from "./hooks";
import { withScope } from "./scope";

const slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/);

/** HTTP status for each refusal a goal delivery may meet; anything else is an internal error. */
const statusByCode: Record<string, number> = {
  org_not_found: 404,
  automation_not_found: 404,
  invalid_signature: 401,
  goal_not_event: 409,
  invalid_payload: 400,
  invalid_json: 400,
};

/**
 * An automation's goal URL (/api/goals/{org}/{automation}, and /{token} in url_token mode), as a plain function of
 * (db, route params, request) so tests drive it without Next. Authenticated like the start trigger, with the goal
 * URL's own credentials; a delivery starts no run: it ends the named contact's runs of the automation as converted.
 * 202: the goal was met (the contact's runs are ending); 200: a repeated delivery (same webhook-id), or a contact this
 * organisation does not know (nothing to end).
 */
export async function handleGoal(db: Db, params: HookParams, request: Request, options: { maxBodyBytes?: number } = {}): Promise<Response> {
  if (!slug.safeParse(params.orgSlug).success) return errorResponse(404, "org_not_found", "organisation not found");
  if (!slug.safeParse(params.automationSlug).success) return errorResponse(404, "automation_not_found", "automation not found");
  const maxBytes = options.maxBodyBytes ?? env.MAX_WEBHOOK_BYTES;
  try {
    const read = await readBodyLimited(request, maxBytes);
    if (!read.ok) return read.response;
    const orgId = await organisationsIdBySlug(db, params.orgSlug);
    if (!orgId) return errorResponse(404, "org_not_found", "organisation not found");
    // The web's database role sees an organisation's rows only inside its scope: the one the URL names; nothing of
    // it is used unless the goal URL's credential passes (deliverGoal).
    const outcome = await withScope({ orgIds: [orgId] }, () =>
      deliverGoal(db, {
        orgId,
        automationSlug: params.automationSlug,
        rawBody: read.text(),
        contentType: request.headers.get("content-type"),
        headers: {
          "webhook-id": request.headers.get("webhook-id"),
          "webhook-timestamp": request.headers.get("webhook-timestamp"),
          "webhook-signature": request.headers.get("webhook-signature"),
        },
        urlToken: params.token ?? null,
      }),
    );
    if (outcome.kind === "met") return Response.json({ converted: true, runsEnding: outcome.runsEnding }, { status: 202 });
    if (outcome.kind === "duplicate") return Response.json({ converted: true, duplicate: true }, { status: 200 });
    return Response.json({ converted: false, reason: "no contact with this email address in this organisation: nothing to end" }, { status: 200 });
  } catch (error) {
    if (isDatabaseUnreachable(error)) {
      return errorResponse(503, "database_unavailable", "the service cannot reach its database right now: send this delivery again later", {
        "retry-after": String(unavailableRetryAfterSeconds),
      });
    }
    const status = error instanceof HoldfastError ? statusByCode[error.code] : undefined;
    if (error instanceof HoldfastError && status !== undefined) return errorResponse(status, error.code, error.message);
    throw error;
  }
}
