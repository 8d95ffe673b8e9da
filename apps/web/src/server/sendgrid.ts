import { createHash, timingSafeEqual } from "node:crypto";
import { createLogger, type Logger } from "@holdfast/core/base";
import { inboundEmail } from "@holdfast/core/people";
import type { Db } from "@holdfast/db";
import { z } from "zod";
import { env } from "../env";
import { readBodyLimited } from "./body";
import { errorResponse } from "./hooks";
import { addressesIn, deliverInboundEmail } from "./signals";

let defaultLog: Logger | undefined;
const digest = (s: string) => createHash("sha256").update(s).digest();
const same = (a: string, b: string) => timingSafeEqual(digest(a), digest(b));

/**
 * The deployment's inbound token, from the URL SendGrid is given: `https://inbound:<token>@host/…` (SendGrid sends it
 * as basic auth) or `…/sendgrid?token=<token>`. Compared in constant time.
 */
function authorised(request: Request, token: string): boolean {
  const header = request.headers.get("authorization");
  const basic = header ? /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim())?.[1] : undefined;
  if (basic) {
    const decoded = Buffer.from(basic, "base64").toString("utf8");
    const password = decoded.slice(decoded.indexOf(":") + 1);
    if (decoded.includes(":") && same(password, token)) return true;
  }
  const inUrl = new URL(request.url).searchParams.get("token");
  return inUrl !== null && same(inUrl, token);
}

/** Raw header lines (SendGrid's `headers` field) unfolded into name -> value, last one wins. */
export function parseHeaderBlock(block: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of block.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    out.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return out;
}

const envelope = z.object({ to: z.array(z.string().max(998)).max(100).default([]), from: z.string().max(998).nullish() }).passthrough();
const field = (form: FormData, name: string) => {
  const v = form.get(name);
  return typeof v === "string" ? v : undefined;
};

/**
 * POST /api/signals/email/sendgrid[?org=<slug>]: SendGrid Inbound Parse (multipart/form-data: from, to, subject,
 * text, headers, envelope; attachments are ignored). Authenticated by INBOUND_EMAIL_TOKEN as basic auth or ?token=,
 * at most MAX_WEBHOOK_BYTES, parsed by the platform's FormData. Routed like the JSON webhook: by a routing address
 * in the envelope or To, else by ?org=. Replies only from the recipient still hold.
 */
export async function handleSendgridInbound(db: Db, request: Request, options: { token?: string | undefined; maxBytes?: number; log?: Logger } = {}): Promise<Response> {
  const log = options.log ?? (defaultLog ??= createLogger("web", env.LOG_LEVEL));
  const token = "token" in options ? options.token : env.INBOUND_EMAIL_TOKEN;
  if (!token) return errorResponse(503, "not_configured", "inbound email is not configured: set INBOUND_EMAIL_TOKEN");
  if (!authorised(request, token)) {
    await request.body?.cancel().catch(() => {});
    return errorResponse(401, "unauthorized", "the inbound token is required: give SendGrid the URL with it as basic auth (https://inbound:<token>@…) or ?token=", {
      "www-authenticate": 'Basic realm="holdfast inbound"',
    });
  }
  const orgParam = new URL(request.url).searchParams.get("org");
  if (orgParam !== null && !/^[a-z0-9][a-z0-9-]{0,62}$/.test(orgParam)) return errorResponse(400, "invalid_org", "?org= must be an organisation slug");
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    await request.body?.cancel().catch(() => {});
    return errorResponse(415, "unsupported_media_type", "SendGrid Inbound Parse posts multipart/form-data; turn off 'POST the raw, full MIME message'");
  }
  const raw = await readBodyLimited(request, options.maxBytes ?? env.MAX_WEBHOOK_BYTES);
  if (!raw.ok) return raw.response;
  let form: FormData;
  try {
    form = await new Response(Buffer.from(raw.bytes), { headers: { "content-type": contentType } }).formData();
  } catch {
    return errorResponse(400, "invalid_form", "the body is not valid multipart/form-data");
  }
  const headers = parseHeaderBlock(field(form, "headers") ?? "");
  let env_: z.infer<typeof envelope> = { to: [] };
  const envelopeText = field(form, "envelope");
  if (envelopeText) {
    try {
      const parsed = envelope.safeParse(JSON.parse(envelopeText));
      if (parsed.success) env_ = parsed.data;
    } catch {
      // A broken envelope: the To field still routes.
    }
  }
  const to = field(form, "to") ?? headers.get("to");
  const email = inboundEmail.safeParse({
    // SendGrid hands over no Message-ID of its own: the message's, else one made from the body (a retry is the same).
    messageId: headers.get("message-id") ?? `<sendgrid.${createHash("sha256").update(raw.bytes).digest("hex").slice(0, 40)}@inbound.invalid>`,
    from: field(form, "from") ?? headers.get("from") ?? "",
    ...(to !== undefined ? { to } : {}),
    subject: field(form, "subject") ?? headers.get("subject") ?? "",
    ...(headers.get("in-reply-to") ? { inReplyTo: headers.get("in-reply-to") } : {}),
    ...(headers.get("references") ? { references: headers.get("references") } : {}),
    text: (field(form, "text") ?? "").slice(0, 200_000),
  });
  if (!email.success) {
    return errorResponse(400, "invalid_payload", email.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "));
  }
  const recipients = [...env_.to, ...addressesIn(to)];
  return deliverInboundEmail(db, { recipients, orgSlug: orgParam, email: email.data }, log);
}
