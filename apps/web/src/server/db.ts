import { createDb, type Db } from "@holdfast/db";
import { env } from "../env";

// `next dev` re-evaluates modules on every edit; keeping the client on globalThis stops each reload opening a new pool.
const cache = globalThis as typeof globalThis & { holdfastWebDb?: Db };

export const db: Db =
  cache.holdfastWebDb ?? createDb(env.DATABASE_URL, { poolSize: env.DB_POOL_SIZE, applicationName: "holdfast-web" });
cache.holdfastWebDb = db;
