/**
 * Reading loosely typed JSON (step outputs, errors, timeline data): a record or nothing, a string, a
 * finite number or a date (a Date or its text), else null.
 */
export const rec = (v: unknown): Record<string, unknown> => (v && typeof v === "object" ? (v as Record<string, unknown>) : {});
export const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
export const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
export const date = (v: unknown): Date | null => (v instanceof Date ? v : typeof v === "string" && !Number.isNaN(Date.parse(v)) ? new Date(v) : null);
