import { createLogger, HoldfastError, InvalidPayloadError, type Logger, parseJsonBounded } from "@holdfast/core/base";
import { organisationsIdBySlug } from "@holdfast/core/store";
import { type InboundEmail, inboundEmail, ingestInboundEmail, UnroutableReplyError } from "@holdfast/core/people";
import { isDatabaseUnreachable } from "@holdfast/core/run";
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
 * POST /api/signals/email[?org=<slug>]: an inbound-email webhook (From, To, Subject, In-Reply-To, References, text).
 * Authenticated by the deployment's INBOUND_EMAIL_TOKEN; validated with zod; stored once per Message-ID. A reply to a
 * routing address (`to` holds `reply+<token>@…`) finds its organisation and run itself; otherwise ?org= names the
 * organisation. 202 when a waiting run consumed it, 200 otherwise (kept for a run that gets there later, or
 * unmatched): never an error loop.
 */
export async function handleEmailSignal(db: Db, request: Request, options: { token?: string | undefined; log?: Logger } = {}): Promise<Response> {
  const log = options.log ?? (defaultLog ??= createLogger("web", env.LOG_LEVEL));
  const token = "token" in options ? options.token : env.INBOUND_EMAIL_TOKEN;
  if (!token) return errorResponse(503, "not_configured", "inbound email is not configured (INBOUND_EMAIL_TOKEN)");
  if (checkBearer(request, token).kind !== "ok") {
    return errorResponse(401, "unauthorized", "a valid bearer token is required");
  }
  const orgParam = new URL(request.url).searchParams.get("org");
  const org = slug.safeParse(orgParam);
  if (orgParam !== null && !org.success) return errorResponse(400, "invalid_org", "?org= must be an organisation slug");
  const raw = await readBodyLimited(request, env.MAX_WEBHOOK_BYTES);
  if (!raw.ok) return raw.response;
  let body: unknown;
  try {
    body = parseJsonBounded(raw.text());
  } catch (error) {
    if (error instanceof InvalidPayloadError) return errorResponse(400, error.code, error.message);
    throw error;
  }
  const email = inboundEmail.safeParse(body);
  if (!email.success) {
    return errorResponse(400, "invalid_payload", email.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "));
  }
  return deliverInboundEmail(db, { recipients: addressesIn(email.data.to), orgSlug: org.success ? org.data : null, email: email.data }, log);
}

/** The addresses in a To (or envelope) value: `a@x, "B" <b@y>` -> [a@x, b@y]. */
export function addressesIn(value: string | string[] | undefined): string[] {
  const text = Array.isArray(value) ? value.join(",") : (value ?? "");
  return [...text.matchAll(/[^\s<>",;:()]+@[^\s<>",;:()]+/g)].map((m) => m[0]);
}

/**
 * Stores an inbound email (JSON webhook, a provider's inbound parse): routed by a routing address among its
 * recipients, else to `orgSlug`. Each database step runs in the narrowest scope: the organisation named, or, to
 * check a routing token, the one step it names. 202 consumed, 200 stored, 404 unknown organisation, 422 unroutable.
 */
export async function deliverInboundEmail(
  db: Db,
  input: { recipients: string[]; orgSlug: string | null; email: InboundEmail },
  log: Logger,
): Promise<Response> {
  try {
    // Scoped to the organisation the address names (the inbound token is deployment-wide); unknown: 404 below.
    const orgId = input.orgSlug ? await organisationsIdBySlug(db, input.orgSlug) : null;
    const outcomes = await withScope({ orgIds: orgId ? [orgId] : [] }, () =>
      ingestInboundEmail(db, input, (scope, work) => withScope(scope.allOrgs ? { allOrgs: true } : { orgIds: scope.orgIds ?? [] }, work)),
    );
    const first = outcomes.find((o) => o.consumed) ?? outcomes[0];
    return Response.json({ ...first, deliveries: outcomes }, { status: outcomes.some((o) => o.consumed) ? 202 : 200 });
  } catch (error) {
    if (error instanceof HoldfastError && error.code === "org_not_found") return errorResponse(404, error.code, error.message);
    if (error instanceof UnroutableReplyError) return errorResponse(422, error.code, error.message);
    if (isDatabaseUnreachable(error)) throw error; // 503 with Retry-After at the route (server/unavailable.ts)
    log.error({ err: error, org: input.orgSlug }, "inbound email failed");
    return errorResponse(500, "internal", "internal error");
  }
}
