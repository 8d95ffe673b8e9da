/** Reading loosely typed JSON (step outputs, errors, timeline data): a record or nothing, a string or null. */
export const rec = (v: unknown): Record<string, unknown> => (v && typeof v === "object" ? (v as Record<string, unknown>) : {});
export const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
