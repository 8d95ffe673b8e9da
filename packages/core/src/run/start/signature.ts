import { timingSafeEqual } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { HoldfastError } from "../../base/errors";

/**
 * A request without the credential its trigger asks for. `detail` answers the sender; `reason` is the same in a
 * few plain words for the trigger panel's delivery log ("signature did not match").
 */
export class SignatureError extends HoldfastError {
  constructor(
    detail: string,
    readonly reason: string = "credential refused",
  ) {
    super("invalid_signature", detail);
  }
}

/** Standard Webhooks allows five minutes of clock difference in either direction. */
export const signatureToleranceSeconds = 5 * 60;

export interface SignedHeaders {
  "webhook-id": string | null;
  "webhook-timestamp": string | null;
  "webhook-signature": string | null;
}

/**
 * Verifies a Standard Webhooks signature against any of the automation's secrets (two during a rotation). The
 * header may carry several space-separated signatures; one valid one suffices. `dbNowSeconds` is the database
 * clock: the tolerance is judged by it, as every expiry is.
 */
export function verifySignature(secrets: string[], rawBody: string, headers: SignedHeaders, dbNowSeconds: number): void {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signature = headers["webhook-signature"];
  if (!id || !timestamp || !signature) {
    throw new SignatureError("this trigger requires webhook-id, webhook-timestamp and webhook-signature headers", "signature headers missing");
  }
  const sent = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || !Number.isSafeInteger(sent)) throw new SignatureError("webhook-timestamp is not a Unix time", "webhook-timestamp is not a Unix time");
  if (Math.abs(dbNowSeconds - sent) > signatureToleranceSeconds) {
    throw new SignatureError("webhook-timestamp is more than 5 minutes away from now", "timestamp more than 5 minutes from now");
  }
  // The library signs (HMAC-SHA256 over id.timestamp.body); the comparison is ours so that the tolerance above is
  // judged by the database clock, not by this process's clock as the library's verify() would.
  const passed = signature
    .split(" ")
    .map((s) => s.split(","))
    .filter(([version, value]) => version === "v1" && value)
    .map(([, value]) => Buffer.from(value as string));
  for (const secret of secrets) {
    let expected: Buffer;
    try {
      expected = Buffer.from(new Webhook(secret).sign(id, new Date(sent * 1000), rawBody).split(",")[1] ?? "");
    } catch {
      continue; // a malformed stored secret matches nothing
    }
    if (passed.some((p) => p.length === expected.length && timingSafeEqual(p, expected))) return;
  }
  throw new SignatureError("no signature matches this trigger's secrets", "signature did not match");
}

/** Signs like a Standard Webhooks sender (tests, the CLI, and the docs' curl example). */
export function signPayload(secret: string, id: string, timestampSeconds: number, rawBody: string): string {
  return new Webhook(secret).sign(id, new Date(timestampSeconds * 1000), rawBody);
}
