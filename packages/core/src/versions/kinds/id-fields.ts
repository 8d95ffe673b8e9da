/**
 * The fields form tools and providers commonly fill with a new value for each submission. The trigger's panel offers
 * the ones a sample payload has as the event id field (a repeated delivery with the same value is the same run).
 * Pure: safe in the browser.
 */
export const commonIdFields = [
  "id",
  "submission_id",
  "submissionId",
  "event_id",
  "eventId",
  "response_id",
  "responseId",
  "entry_id",
  "entryId",
  "token",
  "form_response.token",
  "data.id",
  "data.submission_id",
  "data.response_id",
] as const;

/** The common id fields `sample` has, each with its value (a non-empty string or a finite number), in list order. */
export function detectIdFields(sample: unknown): { path: string; example: string }[] {
  const found: { path: string; example: string }[] = [];
  for (const path of commonIdFields) {
    let v: unknown = sample;
    for (const part of path.split(".")) v = v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>)[part] : undefined;
    if ((typeof v === "string" && v.length > 0) || (typeof v === "number" && Number.isFinite(v))) found.push({ path, example: String(v) });
  }
  return found;
}
