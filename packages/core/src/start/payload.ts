import { InvalidPayloadError } from "../errors";

/**
 * A trigger's body as the object runs start from. JSON objects as sent; `application/x-www-form-urlencoded` (what
 * HTML forms and most form tools post) as an object of strings, a repeated field as an array of its values.
 * Signatures are checked over the raw bytes, whichever it is.
 */
export function triggerPayload(contentType: string | null, rawBody: string): Record<string, unknown> {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (type === "application/x-www-form-urlencoded") {
    const fields: Record<string, unknown> = Object.create(null);
    for (const [key, value] of new URLSearchParams(rawBody)) {
      if (key === "__proto__" || key === "constructor" || key === "prototype") continue;
      const seen = fields[key];
      fields[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
    }
    return { ...fields };
  }
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    throw new InvalidPayloadError("the body is not valid JSON (send JSON, or a form as application/x-www-form-urlencoded)", "invalid_json");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw new InvalidPayloadError("the body must be a JSON object");
  return body as Record<string, unknown>;
}
