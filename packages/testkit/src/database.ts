import { randomBytes } from "node:crypto";
import { createDb, type Db, urlAsRole } from "@holdfast/db";
import pg from "pg";
import { inject } from "vitest";
import { adminUrl } from "./global-setup";

export interface TestDatabase {
  name: string;
  /** As holdfast_worker, the role background processes use in a deployment (every organisation, no superuser). */
  url: string;
  /** As the superuser that created it (schema changes, catalog checks). */
  adminUrl: string;
  db: Db;
  /** A plain pg pool for assertions and for moving time in SQL. */
  sql: pg.Pool;
  drop(): Promise<void>;
}

/** A database of this test file's own, cloned from the migrated template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `hf_t_${inject("runTag")}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject("templateDb")}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const ownerUrl = u.toString();
  const url = urlAsRole(ownerUrl, "holdfast_worker");
  const db = createDb(url, { poolSize: 10, applicationName: "holdfast-test" });
  const sql = new pg.Pool({ connectionString: url, max: 4 });
  // DROP DATABASE ... WITH (FORCE) terminates connections the pool is still closing: expected at teardown.
  sql.on("error", () => {});
  return {
    name,
    url,
    adminUrl: ownerUrl,
    db,
    sql,
    async drop() {
      await db.$disconnect();
      await sql.end();
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A plain connection to the test database as another role (holdfast_web, holdfast_worker), for tenancy checks. */
export async function connectAs(databaseUrl: string, role: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: urlAsRole(databaseUrl, role) });
  await client.connect();
  return client;
}

/**
 * Whether some backend is seen waiting on a lock `holder` holds (pg_blocking_pids, read through `admin`), polled for
 * up to `timeoutMs`: a race test proves its second party really waited on the first, not arrived after its commit.
 */
export async function seenBlockedBy(admin: pg.Client, holder: pg.Client, timeoutMs = 10_000): Promise<boolean> {
  const pid = (holder as unknown as { processID: number }).processID;
  for (const end = Date.now() + timeoutMs; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    const { rows } = await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))", [pid]);
    if ((rows[0]?.n ?? 0) > 0) return true;
  }
  return false;
}
