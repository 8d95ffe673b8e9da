import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { type Prisma, PrismaClient } from "./generated/client";
import { requireDirect } from "./direct";
import { type PoolMode, poolModeConfig } from "./pool-mode";
import { type DbScope, ScopedPool } from "./scope";

export type Db = InstanceType<typeof PrismaClient>;
/** The handle inside `db.$transaction(async (tx) => ...)`: every state change runs on one of these. */
export type Tx = Prisma.TransactionClient;

export interface DbOptions {
  /** Connections in this process's pool. */
  poolSize?: number;
  applicationName?: string;
  /**
   * The row-level security scope of whoever is asking (the web process, whose role is subject to it): every
   * connection is stamped with it when handed out. Background processes leave it unset.
   */
  scope?: () => Promise<DbScope>;
  /**
   * A pooled connection failed (idle or in use: the server went away, restarted or reset it). The pool drops it and
   * opens a new one when next asked; processes pass their outage watch's `report` (core/ops/outage.ts).
   */
  onConnectionError?: (error: Error) => void;
  /**
   * DATABASE_POOL_MODE: "transaction" when the connection string leads to PgBouncer's transaction mode. The pool's
   * clients then send every statement unnamed and a scoped pool sets its scope per transaction (pool-mode.ts,
   * scope.ts); callers change nothing else. Default "session".
   */
  poolMode?: PoolMode;
  /**
   * Keep every connection the pool opened (pg-pool closes those above `min` after 10 s idle): a burst after a quiet
   * spell then finds its connections open, with their statements planned, instead of opening them all at once. Each
   * is still replaced after `keptLifetimeSeconds`, so none stays for ever on a server that changed under it (a
   * failover that did not cut the sessions can leave a connection on a demoted, read-only node).
   */
  keepOpen?: boolean;
}

/**
 * Each client's pool, for the statements that skip Prisma (sqlOf). Kept on globalThis: Next loads this module once
 * per bundle, and a client made in one (instrumentation) is used from others (the routes).
 */
const poolsKey = Symbol.for("holdfast.db.pools");
const pools: WeakMap<object, pg.Pool> = ((globalThis as Record<symbol, unknown>)[poolsKey] as WeakMap<object, pg.Pool> | undefined) ??
  ((globalThis as Record<symbol, unknown>)[poolsKey] = new WeakMap<object, pg.Pool>());

/**
 * TCP keepalive on every connection, first probe after 10 s idle: a connection whose peer vanished without a word (a
 * host or network gone; HAProxy's cut after a failover does say so) is found dead in about half a minute instead of
 * the kernel's two hours. Most matters for LISTEN connections, which only ever read.
 */
const keepAlive = { keepAlive: true, keepAliveInitialDelayMillis: 10_000 } as const;
/**
 * A LISTEN connection that cannot be opened within this gives up and is tried again (listenChannels), rather than
 * waiting for an answer that never comes. Pools set none: in pg-pool the same option also bounds the wait for a free
 * connection, which is Prisma's maxWait's job.
 */
const listenConnectTimeoutMs = 10_000;
/** How long a kept connection lives (`keepOpen`): replaced when idle after this, as HikariCP's maxLifetime does. */
const keptLifetimeSeconds = 1_800;
/** pg-pool's settings for `keepOpen`: none closed for being idle, each replaced after its lifetime. */
const kept = (keepOpen: boolean | undefined, max: number) => (keepOpen ? { min: max, maxLifetimeSeconds: keptLifetimeSeconds } : {});

export function createDb(connectionString: string, options: DbOptions = {}): Db {
  const max = options.poolSize ?? 10;
  const config = { connectionString, max, ...kept(options.keepOpen, max), application_name: options.applicationName ?? "holdfast", ...keepAlive };
  const onError = options.onConnectionError;
  const pool = options.scope ? new ScopedPool(config, options.scope, options.poolMode) : new pg.Pool({ ...config, ...poolModeConfig(options.poolMode) });
  // An idle client's error is emitted on the pool, and an 'error' event with no listener ends the process; Prisma adds
  // its own only when it first connects, and sqlOf may use the pool before that.
  pool.on("error", onError ?? (() => {}));
  // The client owns its pool as it would one it made itself: $disconnect ends it.
  const adapter = new PrismaPg(pool, { disposeExternalPool: true, ...(onError ? { onPoolError: onError, onConnectionError: onError } : {}) });
  const db = new PrismaClient({
    adapter,
    // Waiting for a pooled connection under load is normal; a transaction that runs for half a minute is not.
    transactionOptions: { maxWait: 15_000, timeout: 30_000 },
  });
  pools.set(db, pool);
  return db;
}

/**
 * The same connections as `db` for a statement sent with a name (parsed and planned once per connection, no Prisma
 * round in Node): a start's two statements. The web's pool stamps each connection with the request's row-level
 * security scope as it does for Prisma's queries (scope.ts). Inside a transaction, or for a client not made by
 * createDb, the statement goes through Prisma unnamed; in transaction pool mode every statement goes unnamed.
 */
export function sqlOf(db: Db | Tx): Sql {
  const pool = pools.get(db);
  return pool ? (pool as unknown as Sql) : prismaSql(db);
}

/** Runs `fn` in one transaction: the unit in which a state change, its outbox row and its timeline row commit. */
export function inTx<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.$transaction(fn);
}

/**
 * The hot path's connection: plain `pg` with named prepared statements (parsed and planned once per connection),
 * for the two statements every step runs (claim and settle) and the heartbeat. Everything else goes through Prisma.
 */
export interface Sql {
  query<R = Record<string, unknown>>(statement: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: R[] }>;
}

export function createPool(connectionString: string, options: DbOptions = {}): pg.Pool & Sql {
  const max = options.poolSize ?? 10;
  const pool = new pg.Pool({
    connectionString,
    max,
    ...kept(options.keepOpen, max),
    application_name: options.applicationName ?? "holdfast",
    ...poolModeConfig(options.poolMode),
    ...keepAlive,
  });
  // An idle client's error is emitted on the pool, and an 'error' event with no listener ends the process.
  pool.on("error", options.onConnectionError ?? (() => {}));
  return pool;
}

/**
 * Opens `size` connections of `pool` now, all at once, and runs `warm` on each (the hot path's statements, so each
 * connection has them parsed and planned), instead of on the first steps that find no idle connection: a new
 * connection costs a server process and its first statements' planning, about 20 ms here (docs/performance.md).
 * A failure is the caller's to log: the pool then opens connections as they are asked for, as it would anyway.
 */
export async function openPool(pool: pg.Pool, size: number, warm: (connection: Sql) => Promise<unknown>): Promise<void> {
  const opened = await Promise.allSettled(Array.from({ length: size }, () => pool.connect()));
  const clients = opened.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
  const warmed = await Promise.allSettled(clients.map((c) => warm(c)));
  clients.forEach((c, i) => {
    const w = warmed[i];
    // A connection whose warm-up failed is closed, not handed to a step.
    c.release(w?.status === "rejected" ? (w.reason instanceof Error ? w.reason : new Error(String(w.reason))) : undefined);
  });
  const failure = opened.find((o) => o.status === "rejected") ?? warmed.find((w) => w.status === "rejected");
  if (failure?.status === "rejected") throw failure.reason;
}

/**
 * A statement built with Prisma.sql sent as a named one (sqlOf): `name` must stand for one text only (a variant of
 * the statement takes a name of its own), since each connection keeps the first text it prepared under a name.
 */
export function queryNamed<R>(sql: Sql, name: string, statement: Prisma.Sql): Promise<{ rows: R[] }> {
  return sql.query<R>({ name, text: statement.text, values: statement.values });
}

/** The same statements through Prisma's connection (tests and processes without a hot-path pool). */
export function prismaSql(db: Db | Tx): Sql {
  return {
    query: async <R>(statement: { text: string; values?: unknown[] }) => ({
      rows: (await db.$queryRawUnsafe(statement.text, ...(statement.values ?? []))) as R[],
    }),
  };
}

/** A dedicated connection for LISTEN (outside every pool: a pooled connection would lose its subscriptions). */
export interface ListenClient {
  connect(): Promise<unknown>;
  query(text: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: "notification", listener: (message: { channel: string; payload?: string | undefined }) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "end", listener: () => void): unknown;
}

export function createListenClient(connectionString: string, applicationName: string): ListenClient {
  const client = new pg.Client({ connectionString, application_name: applicationName, connectionTimeoutMillis: listenConnectTimeoutMs, ...keepAlive });
  // Subscriptions live in the server session: a pooler's connection would lose them without a word.
  const connect = client.connect.bind(client);
  return Object.assign(client, {
    connect: async () => {
      await connect();
      await requireDirect(client, "listen");
    },
  }) as ListenClient;
}
