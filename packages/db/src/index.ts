export { createDb, createListenClient, createPool, inTx, openPool, prismaSql, queryNamed, sqlOf, type Db, type DbOptions, type ListenClient, type Sql, type Tx } from "./client";
export { ensureDatabase, functionFiles, functionsDir, migrate, migrationsDir, setRolePasswords, urlAsRole, type MigrationResult } from "./migrate";
export { dumpSchema, normaliseDump, schemaDumpHeader, schemaDumpPath } from "./schema-dump";
export { Prisma } from "./generated/client";
export { type PoolMode, TransactionModeClient } from "./pool-mode";
export { emptyScope, ScopedPool, transactionScopeSql, type DbScope } from "./scope";
export { isPooled, PooledConnectionError, requireDirect } from "./direct";
