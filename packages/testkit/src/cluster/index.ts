export * from "./redis-cluster";
export { ensureClusterPackages, missingClusterPackages } from "./install";
export { type PgBouncerHandle, type PgBouncerOptions, startPgBouncer } from "./pgbouncer";
export { type PgClusterHandle, type PgClusterOptions, startPgCluster } from "./pg-cluster";
export { type ClusterDatabase, createClusterDatabase } from "./cluster-database";
export { runCommand } from "./daemon";
export { type PgArchive, type PgInstance, pgBin, startPgArchive } from "./pg-archive";
