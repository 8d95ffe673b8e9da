import { ensureDatabase, migrate } from "@holdfast/db";
import pg from "pg";

export const adminUrl = process.env.BENCH_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export function urlFor(name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A fresh, migrated database (dropped first if it exists). */
export async function freshDatabase(name: string, migrated = true): Promise<string> {
  await dropDatabase(name);
  const url = urlFor(name);
  await ensureDatabase(url);
  if (migrated) await migrate(url);
  return url;
}

export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

export async function setting(url: string, name: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const r = await c.query(`SELECT current_setting($1) AS v`, [name]);
  await c.end();
  return r.rows[0].v;
}
