/** One class per condition, each with a stable `code`; the edges (HTTP, CLI) map codes to statuses. */
export class HoldfastError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A fenced write (heartbeat, settle, release) matched no row: a newer attempt owns the step. */
export class LeaseLostError extends HoldfastError {
  constructor(
    readonly stepId: string,
    readonly token: number,
  ) {
    super("lease_lost", `step ${stepId}: attempt ${token} no longer holds the lease`);
  }
}

export class NotFoundError extends HoldfastError {
  constructor(code: "org_not_found" | "automation_not_found" | "run_not_found" | "approval_not_found" | "user_not_found", what: string) {
    super(code, `${what} not found`);
  }
}

export class NoPublishedVersionError extends HoldfastError {
  constructor(automation: string) {
    super("no_published_version", `automation "${automation}" is a draft: publish it first (Publish in its editor); deliveries are refused until it is published`);
  }
}

export class InvalidPayloadError extends HoldfastError {
  constructor(detail: string, code: "invalid_payload" | "invalid_json" = "invalid_payload") {
    super(code, detail);
  }
}

export class InvalidGraphError extends HoldfastError {
  constructor(readonly problems: { path: string; message: string }[]) {
    super("invalid_graph", `invalid graph: ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`);
  }
}

/** PostgreSQL error code of an error thrown through pg or Prisma's adapter, when there is one. */
/**
 * Every error object in `error`'s chain, breadth first, each once: its `cause`, a Prisma error's driver adapter error
 * (`meta.driverAdapterError`) and an AggregateError's `errors` (a refused connection to every address of a host).
 * At most `limit` objects, so a cyclic or endless chain ends.
 */
export function* errorChain(error: unknown, limit = 20): Generator<Record<string, unknown>> {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.size < limit) {
    const e = queue.shift();
    if (!e || typeof e !== "object" || seen.has(e)) continue;
    seen.add(e);
    const o = e as { cause?: unknown; errors?: unknown; meta?: { driverAdapterError?: unknown } };
    yield e as Record<string, unknown>;
    queue.push(o.cause, o.meta?.driverAdapterError);
    if (Array.isArray(o.errors)) queue.push(...o.errors);
  }
}

export function pgErrorCode(error: unknown): string | undefined {
  let e: unknown = error;
  for (let i = 0; i < 5 && e && typeof e === "object"; i++) {
    const o = e as { code?: unknown; meta?: { code?: unknown; driverAdapterError?: unknown }; cause?: unknown };
    // A Prisma error's own code (P2010 "raw query failed") wraps the database's SQLSTATE in meta: look there first.
    if (typeof o.meta?.code === "string") return o.meta.code;
    if (typeof o.code === "string" && /^[0-9A-Z]{5}$/.test(o.code) && !/^P[1-9]\d{3}$/.test(o.code)) return o.code;
    e = o.meta?.driverAdapterError ?? o.cause;
  }
  return undefined;
}
