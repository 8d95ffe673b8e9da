export { createDb, createListenClient, createPool, inTx, openPool, prismaSql, queryNamed, sqlOf, type Db, type DbOptions, type ListenClient, type Sql, type Tx } from "./client";
export { ensureDatabase, functionFiles, functionsDir, migrate, migrationsDir, setRolePasswords, urlAsRole, type MigrationResult } from "./migrate";
export { dumpSchema, normaliseDump, schemaDumpHeader, schemaDumpPath } from "./schema-dump";
export { Prisma } from "./generated/client";
export { emptyScope, ScopedPool, type DbScope } from "./scope";
