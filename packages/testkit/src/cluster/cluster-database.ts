import { createDb, type Db, migrate, urlAsRole } from "@holdfast/db";
import pg from "pg";
import type { PgClusterHandle } from "./pg-cluster";

/** The product's database on a Patroni cluster, reached through HAProxy (and PgBouncer for `pooledUrl`). */
export interface ClusterDatabase {
  name: string;
  /** As holdfast_worker through HAProxy: sessions kept (engine, relay, sweeper, LISTEN connections). */
  url: string;
  /** As holdfast_worker through PgBouncer (transaction mode) -> HAProxy. */
  pooledUrl: string;
  /** As the superuser through HAProxy (migrations, assertions that read every organisation's rows). */
  adminUrl: string;
  /** A Prisma client as holdfast_worker through HAProxy (publishing graphs, reading results). */
  db: Db;
  /** Rows of one statement through HAProxy; a failover in between is the caller's to retry. */
  // biome-ignore lint/suspicious/noExplicitAny: rows are read by the tests' own column names
  q(sql: string, params?: unknown[]): Promise<any[]>;
  close(): Promise<void>;
}

/**
 * Creates database `name` on the cluster and migrates it as the deployment would (packages/db `migrate`, which also
 * creates the roles holdfast_web and holdfast_worker: roles are the cluster's, so the standby has them too).
 */
export async function createClusterDatabase(cluster: PgClusterHandle, name: string): Promise<ClusterDatabase> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name ${name} must be lower-case letters, digits and _`);
  const admin = new pg.Client({ connectionString: cluster.url("postgres") });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const adminUrl = cluster.url(name);
  await migrate(adminUrl);
  const url = urlAsRole(adminUrl, "holdfast_worker");
  const db = createDb(url, { poolSize: 4, applicationName: "holdfast-test" });
  const sql = new pg.Pool({ connectionString: adminUrl, max: 3 });
  // A failover cuts the pool's connections: the pool opens new ones; an idle client's error must not end the test.
  sql.on("error", () => {});
  return {
    name,
    url,
    pooledUrl: cluster.pooledUrl(name, "holdfast_worker"),
    adminUrl,
    db,
    q: async (text, params = []) => (await sql.query(text, params)).rows,
    async close() {
      await db.$disconnect().catch(() => undefined);
      await sql.end().catch(() => undefined);
    },
  };
}
