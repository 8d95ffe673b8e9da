import { InvalidPayloadError } from "./errors";

/**
 * Bodies from outside (trigger deliveries, inbound email, Slack payloads, tRPC): parsed in one pass whatever their
 * shape, bounded in depth and fields, refused in words (issue 39). Pure: no IO.
 */

/**
 * What a body from outside may hold, whoever sends it. Both limits are far above any real webhook (a Stripe or
 * Shopify event nests under 10 levels and carries a few hundred fields) and keep everything that walks a payload
 * afterwards (signature-free checks, canonical JSON for start keys, jsonb) cheap and within the stack.
 */
export const payloadLimits = {
  /** Objects and arrays inside one another. */
  maxDepth: 64,
  /** Fields of an HTML form (PHP's max_input_vars and qs' parameterLimit say 1,000 too). */
  maxFormFields: 1_000,
  /** Members of all JSON objects together, and elements of all arrays together. */
  maxJsonValues: 20_000,
} as const;

/**
 * Why a JSON text is not a shape we take (too deep, too many values), or null. One pass over the characters with no
 * allocation, so it costs the same whatever the shape; it does not check the JSON is valid (JSON.parse does).
 */
export function jsonShapeProblem(text: string, limits: { maxDepth: number; maxValues: number } = { maxDepth: payloadLimits.maxDepth, maxValues: payloadLimits.maxJsonValues }): string | null {
  let depth = 0;
  let values = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character (\" and \\ included)
      else if (c === 0x22) inString = false;
      continue;
    }
    switch (c) {
      case 0x22: // "
        inString = true;
        break;
      case 0x7b: // {
      case 0x5b: // [
        if (++depth > limits.maxDepth) return `the body is nested more than ${limits.maxDepth} levels deep: send at most ${limits.maxDepth} levels of objects and arrays`;
        break;
      case 0x7d: // }
      case 0x5d: // ]
        depth--;
        break;
      case 0x2c: // , (one more member or element)
      case 0x3a: // : (a member)
        // A member counts once (its colon); an array's elements by their commas. Over-counts a little, never under.
        if (++values > limits.maxValues) return `the body has more than ${limits.maxValues.toLocaleString("en")} fields and array elements: send fewer`;
        break;
    }
  }
  return null;
}

/** JSON.parse after jsonShapeProblem: refuses a text too deep or too large in values before building anything. */
export function parseJsonBounded(text: string): unknown {
  const problem = jsonShapeProblem(text);
  if (problem) throw new InvalidPayloadError(problem);
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidPayloadError("the body is not valid JSON (send JSON, or a form as application/x-www-form-urlencoded)", "invalid_json");
  }
}

/**
 * `application/x-www-form-urlencoded` as an object of strings, a repeated field as an array of its values (appended
 * in place: linear in the body's size whatever the shape). At most `payloadLimits.maxFormFields` fields.
 */
export function parseFormBounded(text: string, maxFields: number = payloadLimits.maxFormFields): Record<string, unknown> {
  // Counted before URLSearchParams builds its list (it parses the whole text at once): a refusal allocates nothing.
  let count = 0;
  let pieceStart = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && text.charCodeAt(i) !== 0x26) continue; // &
    if (i > pieceStart && ++count > maxFields) throw new InvalidPayloadError(`the form has more than ${maxFields.toLocaleString("en")} fields: send fewer`);
    pieceStart = i + 1;
  }
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(text)) {
    if (key === "__proto__" || key === "constructor" || key === "prototype") continue;
    const seen = fields[key];
    if (seen === undefined) fields[key] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else fields[key] = [seen, value];
  }
  return { ...fields };
}
