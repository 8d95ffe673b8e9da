import { createLogger, HoldfastError, inboundEmail, ingestEmailReply, type Logger, organisationsIdBySlug } from "@holdfast/core";
import type { Db } from "@holdfast/db";
import { z } from "zod";
import { env } from "../env";
import { checkBearer } from "./bearer";
import { readBodyLimited } from "./body";
import { errorResponse } from "./hooks";
import { withScope } from "./scope";

const slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/);
let defaultLog: Logger | undefined;

/**
 * POST /api/signals/email?org=<slug>: an inbound-email webhook (From, To, Subject, In-Reply-To, References, text).
 * Authenticated by the deployment's INBOUND_EMAIL_TOKEN; validated with zod; stored once per Message-ID. 202 when a
 * waiting run consumed it, 200 otherwise (kept for a run that gets there later, or unmatched): never an error loop.
 */
export async function handleEmailSignal(db: Db, request: Request, options: { token?: string | undefined; log?: Logger } = {}): Promise<Response> {
  const log = options.log ?? (defaultLog ??= createLogger("web", env.LOG_LEVEL));
  const token = "token" in options ? options.token : env.INBOUND_EMAIL_TOKEN;
  if (!token) return errorResponse(503, "not_configured", "inbound email is not configured (INBOUND_EMAIL_TOKEN)");
  if (checkBearer(request, token).kind !== "ok") {
    return errorResponse(401, "unauthorized", "a valid bearer token is required");
  }
  const org = slug.safeParse(new URL(request.url).searchParams.get("org"));
  if (!org.success) return errorResponse(400, "invalid_org", "?org=<organisation slug> is required");
  const raw = await readBodyLimited(request, env.MAX_WEBHOOK_BYTES);
  if (!raw.ok) return raw.response;
  let body: unknown;
  try {
    body = JSON.parse(raw.text());
  } catch {
    return errorResponse(400, "invalid_json", "the body is not valid JSON");
  }
  const email = inboundEmail.safeParse(body);
  if (!email.success) {
    return errorResponse(400, "invalid_payload", email.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "));
  }
  try {
    // Scoped to the organisation the address names (the inbound token is deployment-wide); unknown: 404 below.
    const orgId = await organisationsIdBySlug(db, org.data);
    const outcome = await withScope({ orgIds: orgId ? [orgId] : [] }, () => ingestEmailReply(db, org.data, email.data));
    return Response.json(outcome, { status: outcome.consumed ? 202 : 200 });
  } catch (error) {
    if (error instanceof HoldfastError && error.code === "org_not_found") return errorResponse(404, error.code, error.message);
    log.error({ err: error, org: org.data }, "inbound email failed");
    return errorResponse(500, "internal", "internal error");
  }
}
