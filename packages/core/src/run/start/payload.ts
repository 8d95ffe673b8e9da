import { parseFormBounded, parseJsonBounded } from "../../base/bodies";
import { InvalidPayloadError } from "../../base/errors";

/**
 * A trigger's body as the object runs start from. JSON objects as sent; `application/x-www-form-urlencoded` (what
 * HTML forms and most form tools post) as an object of strings, a repeated field as an array of its values.
 * Signatures are checked over the raw bytes, whichever it is; startRun parses only after the credential passed.
 */
export function triggerPayload(contentType: string | null, rawBody: string): Record<string, unknown> {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (type === "application/x-www-form-urlencoded") return parseFormBounded(rawBody);
  const body = parseJsonBounded(rawBody);
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw new InvalidPayloadError("the body must be a JSON object");
  return body as Record<string, unknown>;
}
