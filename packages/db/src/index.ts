export { createDb, inTx, type Db, type DbOptions, type Tx } from "./client";
export { ensureDatabase, migrate, migrationsDir, type MigrationResult } from "./migrate";
export { Prisma } from "./generated/client";
