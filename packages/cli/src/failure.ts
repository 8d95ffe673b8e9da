import { HoldfastError, pgErrorCode } from "@holdfast/core/base";
import { connectionFailureOf } from "@holdfast/core/run";

/**
 * What the CLI says when a command fails for a reason outside it: the database cannot be reached, or does not
 * exist yet. One line naming the database (never its password) and what to do, instead of the driver's stack.
 * Exit 69 (EX_UNAVAILABLE). Null for any other error.
 */
export function databaseFailure(error: unknown, databaseUrl: string): { message: string; exitCode: number } | null {
  const where = describeUrl(databaseUrl);
  if (pgErrorCode(error) === "3D000" || adapterKind(error) === "DatabaseDoesNotExist") {
    return { message: `the database ${where} does not exist: run \`pnpm holdfast migrate\` (it creates it), or check DATABASE_URL`, exitCode: 69 };
  }
  if (pgErrorCode(error) === "28P01" || pgErrorCode(error) === "28000" || adapterKind(error) === "AuthenticationFailed" || adapterKind(error) === "DatabaseAccessDenied") {
    return { message: `the database ${where} refused the user or password in DATABASE_URL: check them (pnpm holdfast migrate creates the roles)`, exitCode: 69 };
  }
  const failure = connectionFailureOf(error);
  if (failure === "database" || failure === "network") {
    return { message: `cannot reach the database ${where}: is PostgreSQL running there? Start it, or check DATABASE_URL`, exitCode: 69 };
  }
  return null;
}

/** A one-line message for an error nobody foresaw (the stack only with HOLDFAST_DEBUG=1). */
export function unexpectedFailure(error: unknown): string {
  if (error instanceof HoldfastError) return `${error.code}: ${error.message}`;
  const message = error instanceof Error ? error.message.trim().split("\n").filter(Boolean).at(-1) ?? error.name : String(error);
  return `unexpected error: ${message} (HOLDFAST_DEBUG=1 prints the details)`;
}

function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `"${u.pathname.replace(/^\//, "") || "postgres"}" at ${u.hostname}:${u.port || "5432"}`;
  } catch {
    return "in DATABASE_URL";
  }
}

function adapterKind(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let e: unknown = error;
  while (e && typeof e === "object" && !seen.has(e) && seen.size < 10) {
    seen.add(e);
    const o = e as { kind?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } };
    if (typeof o.kind === "string") return o.kind;
    e = o.meta?.driverAdapterError ?? o.cause;
  }
  return undefined;
}
