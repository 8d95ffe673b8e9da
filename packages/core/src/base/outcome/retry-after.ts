/** A provider asking for more than a day is capped: the step comes back then and asks again. */
export const maxRetryAfterMs = 24 * 3600_000;

/**
 * A Retry-After header in milliseconds: delta-seconds or an HTTP date. An HTTP date is measured against the
 * response's own Date header when present (the provider's clock), else against `nowMs`.
 */
export function parseRetryAfter(value: string | null, responseDate: string | null, nowMs: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(maxRetryAfterMs, Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  const reference = responseDate ? Date.parse(responseDate) : Number.NaN;
  return Math.min(maxRetryAfterMs, Math.max(0, at - (Number.isNaN(reference) ? nowMs : reference)));
}
