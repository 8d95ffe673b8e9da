import { type RedisTarget, redisProbe } from "@holdfast/queue";
import { errorChain, pgErrorCode } from "../../base/errors";
import { connectionSlotAdvice, isOutOfConnectionSlots } from "./connection-slots";
import type { Logger } from "../../base/log";

/**
 * Outages of PostgreSQL and Redis, said once: every process keeps one `Outages` watch. An error that is a lost or
 * refused connection is reported to it instead of being logged where it happened; the watch checks the service
 * itself (a `SELECT 1`, a `PING`) and logs one line when the service stops answering and one when it answers
 * again, however many queries failed in between. Pools and Redis clients reconnect by themselves; the watch only
 * tells the loops when to try again (`whenUp`) and tells people what is going on.
 */

export type Service = "database" | "redis";

/** Seconds a webhook sender is asked to wait (`Retry-After`) while the database cannot be reached. */
export const unavailableRetryAfterSeconds = 30;

/** Socket failures: nothing answers at that address (a refused or reset connection, a timeout, no route). */
const socketCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "ECONNABORTED"]);
/** Prisma: can't reach the server, timed out reaching it, timed out talking to it, the server closed the connection. */
const prismaCodes = new Set(["P1001", "P1002", "P1008", "P1017"]);
/** Prisma's pg adapter's names for socket failures (`meta.driverAdapterError.cause.kind`). */
const adapterKinds = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout"]);
/**
 * SQLSTATE 57P01-57P03: the server is shutting down, crashed or still starting (a restart). Class 08: connection
 * exceptions. 53300: no connection slot is free (max_connections, or a database's or role's CONNECTION LIMIT): as
 * out of reach as a restart for whoever was refused, and it passes the same way. 25006: a write reached a server that
 * is read-only: during a failover, a standby (or a leader still finishing its promotion) behind the primary's
 * address; the primary is not there yet, which passes like a restart.
 */
const pgStates = /^(08...|57P0[123]|53300|25006)$/;
const pgMessages =
  /Connection terminated|is not queryable|timeout exceeded when trying to connect|Can't reach database server|Server has closed the connection|too many clients already|too many connections for|remaining connection slots are reserved/i;
const redisMessages = /Connection is closed|Stream isn't writeable|enableOfflineQueue|max retries per request|^LOADING /i;

/**
 * Which service an error says is out of reach: `database` or `redis` when the error names it, `network` for a bare
 * socket failure (either could be meant: the watch checks both), null for any other error.
 */
export function connectionFailureOf(error: unknown): Service | "network" | null {
  const code = pgErrorCode(error);
  if (code && pgStates.test(code)) return "database";
  let network = false;
  for (const o of errorChain(error)) {
    const message = typeof o.message === "string" ? o.message : "";
    if (typeof o.code === "string" && prismaCodes.has(o.code)) return "database";
    if (typeof o.kind === "string" && adapterKinds.has(o.kind)) return "database";
    if (pgMessages.test(message)) return "database";
    if (o.name === "MaxRetriesPerRequestError" || redisMessages.test(message)) return "redis";
    if (typeof o.code === "string" && socketCodes.has(o.code)) network = true;
  }
  return network ? "network" : null;
}

/** True when `error` is a lost or refused database connection (or a bare socket failure in a process whose only service is the database). */
export function isDatabaseUnreachable(error: unknown): boolean {
  const kind = connectionFailureOf(error);
  return kind === "database" || kind === "network";
}

/** What a shared loop or handler needs: report an error, and wait until nothing is down. */
export interface OutageReporter {
  /** True when `error` is a lost connection to a watched service: the watch has it, the caller logs nothing more. */
  report(error: unknown): boolean;
  /** Resolves once no watched service is down (at once when none is). */
  whenUp(): Promise<void>;
}

export interface WatchedService {
  service: Service;
  /** A cheap round trip that throws when the service does not answer (`SELECT 1`, `PING`). */
  probe: () => Promise<unknown>;
}

export interface OutagesOptions {
  log: Logger;
  services: WatchedService[];
  /** Check every service this often while it answers, so an idle process notices too (0: only when an error is reported). */
  checkEveryMs?: number;
  /** While a service is down, check it this often. */
  retryEveryMs?: number;
  /** A probe that takes longer than this counts as no answer. */
  probeTimeoutMs?: number;
  /** Called by `stop()` (closes the probes' own connections). */
  onStop?: () => void;
}

interface State {
  watched: WatchedService;
  down: { since: number } | null;
  checking: Promise<void> | null;
  retry: NodeJS.Timeout | null;
}

export class Outages implements OutageReporter {
  private readonly states: State[];
  private readonly waiters = new Set<() => void>();
  private periodic: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly opts: OutagesOptions) {
    this.states = opts.services.map((watched) => ({ watched, down: null, checking: null, retry: null }));
  }

  /** Starts the periodic checks (`checkEveryMs`). */
  start(): this {
    const every = this.opts.checkEveryMs ?? 5_000;
    if (every > 0 && !this.periodic) {
      this.periodic = setInterval(() => {
        for (const s of this.states) if (!s.down) void this.check(s);
      }, every);
      this.periodic.unref();
    }
    return this;
  }

  stop(): void {
    this.stopped = true;
    if (this.periodic) clearInterval(this.periodic);
    for (const s of this.states) if (s.retry) clearTimeout(s.retry);
    for (const wake of this.waiters) wake();
    this.opts.onStop?.();
  }

  report(error: unknown): boolean {
    const kind = connectionFailureOf(error);
    if (!kind) return false;
    const concerned = this.states.filter((s) => kind === "network" || s.watched.service === kind);
    if (concerned.length === 0) return false;
    for (const s of concerned) if (!s.down) void this.check(s, error);
    return true;
  }

  isDown(service?: Service): boolean {
    return this.states.some((s) => s.down && (!service || s.watched.service === service));
  }

  async whenUp(): Promise<void> {
    await Promise.all(this.states.map((s) => s.checking));
    if (this.stopped || !this.isDown()) return;
    await new Promise<void>((resolve) => this.waiters.add(resolve));
  }

  /** One check at a time per service; its outcome moves the service up or down, each move logged once. */
  private check(s: State, reported?: unknown): Promise<void> {
    s.checking ??= this.probe(s.watched)
      .then(
        () => {
          if (s.down) {
            const downMs = Date.now() - s.down.since;
            s.down = null;
            this.opts.log.info({ outage: "up", service: s.watched.service, downMs }, `${s.watched.service} reachable again after ${(downMs / 1000).toFixed(1)} s`);
            if (!this.isDown()) {
              for (const wake of this.waiters) wake();
              this.waiters.clear();
            }
          } else if (reported) {
            // One connection was lost but the service answers: the pool or client opens a new one; the work is retried.
            this.opts.log.debug({ service: s.watched.service, err: reported }, `a ${s.watched.service} connection failed but it answers`);
          }
        },
        (error: unknown) => {
          if (!s.down) {
            s.down = { since: Date.now() };
            const reason = reasonOf(error);
            // No free connection slot is an outage of this process's own making (or its neighbours'): say what to do.
            const advice = isOutOfConnectionSlots(error) ? `; too many clients: ${connectionSlotAdvice}` : "";
            this.opts.log.error(
              { outage: "down", service: s.watched.service, reason },
              `${s.watched.service} unreachable (${reason}): work waits and resumes by itself when it is back${advice}`,
            );
          }
          if (!this.stopped) {
            s.retry = setTimeout(() => void this.check(s), this.opts.retryEveryMs ?? 1_000);
            s.retry.unref();
          }
        },
      )
      .finally(() => {
        s.checking = null;
      });
    return s.checking;
  }

  private probe(watched: WatchedService): Promise<unknown> {
    const timeoutMs = this.opts.probeTimeoutMs ?? 5_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([watched.probe(), timeout]).finally(() => clearTimeout(timer));
  }
}

/**
 * A process's watch: the database through its own pool (`SELECT 1`), Redis (when the process uses it) through a
 * standing probe connection. Started; `stop()` at shutdown.
 */
export function watchOutages(opts: { log: Logger; database: () => Promise<unknown>; redis?: RedisTarget | undefined; checkEveryMs?: number }): Outages {
  const redis = opts.redis ? redisProbe(opts.redis) : null;
  const services: WatchedService[] = [{ service: "database", probe: opts.database }];
  if (redis) services.push({ service: "redis", probe: () => redis.ping() });
  return new Outages({
    log: opts.log,
    services,
    ...(opts.checkEveryMs !== undefined ? { checkEveryMs: opts.checkEveryMs } : {}),
    ...(redis ? { onStop: () => redis.close() } : {}),
  }).start();
}

/** The failure in a few words for the log line (Prisma's message is several lines; its last says what happened). */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const quoted = /Message: `(.+)`\s*$/.exec(message)?.[1];
  const last = message.split("\n").map((line) => line.trim()).filter(Boolean).at(-1) ?? "no answer";
  return (quoted ?? last).slice(0, 200);
}
