/**
 * Where a connection's secret goes: its server, API address and the header carrying it. A saved secret is only ever
 * sent where it was saved for: testing or saving a changed destination needs the secret typed again, so nobody (an
 * owner's slip, or a borrowed session) can point a stored key at another server and read it there. Pure.
 */
const destinationFields = ["host", "port", "tls", "baseUrl", "apiUrl", "header"] as const;

export function destinationChanged(before: unknown, after: unknown): boolean {
  const read = (c: unknown, f: string) => (c !== null && typeof c === "object" ? (c as Record<string, unknown>)[f] : undefined);
  const norm = (v: unknown) => (typeof v === "string" ? v.trim().replace(/\/+$/, "").toLowerCase() : v);
  return destinationFields.some((f) => norm(read(before, f)) !== norm(read(after, f)));
}

export const retypeSecret =
  "The address this connection sends its secret to changed: type the secret again (a saved secret is only sent where it was saved for).";
