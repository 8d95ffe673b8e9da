/** One PostgreSQL node under Patroni: its name, ports and folders. */
export interface PatroniNode {
  name: string;
  pgPort: number;
  restPort: number;
  /** The node's folder (sockets, pgpass); its data directory is `${dir}/data`. */
  dir: string;
}

/**
 * Failover timing. Patroni's documented minimums are ttl 20, loop_wait 1, retry_timeout 3, with
 * loop_wait + 2 * retry_timeout <= ttl (1 + 6 <= 20). After a leader's host dies its leader key lives out its ttl, so a
 * failover takes about ttl seconds; a smaller ttl is possible with 3.0.2 (it does not check) but unsupported.
 */
export const patroniTiming = { ttl: 20, loop_wait: 1, retry_timeout: 3 } as const;

const hba = ["local all all trust", "host all all 127.0.0.1/32 trust", "host replication all 127.0.0.1/32 trust"];

/**
 * The Patroni configuration of one node. Written as JSON, which YAML (Patroni's format) reads as it is.
 * - synchronous_mode with synchronous_commit on: a commit returns only once the sync standby has it, so the standby
 *   Patroni promotes holds every acknowledged commit.
 * - master_start_timeout 0: a crashed primary is failed over at once, not restarted in place first.
 * - use_pg_rewind (wal_log_hints on): the old primary rejoins as a standby even when it wrote WAL the new one never got.
 */
export function patroniConfig(scope: string, node: PatroniNode, etcdHosts: string[]): Record<string, unknown> {
  const address = (port: number) => `127.0.0.1:${port}`;
  return {
    scope,
    name: node.name,
    log: { level: "INFO" },
    restapi: { listen: address(node.restPort), connect_address: address(node.restPort) },
    etcd3: { hosts: etcdHosts },
    bootstrap: {
      dcs: {
        ...patroniTiming,
        maximum_lag_on_failover: 1048576,
        master_start_timeout: 0,
        synchronous_mode: true,
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          parameters: {
            synchronous_commit: "on",
            wal_log_hints: "on",
            wal_level: "replica",
            hot_standby: "on",
            max_connections: 300,
            max_wal_senders: 10,
            max_replication_slots: 10,
            wal_keep_size: "128MB",
          },
        },
      },
      initdb: [{ encoding: "UTF8" }, { locale: "C.UTF-8" }],
      pg_hba: hba,
    },
    postgresql: {
      listen: address(node.pgPort),
      connect_address: address(node.pgPort),
      data_dir: `${node.dir}/data`,
      bin_dir: "/usr/lib/postgresql/15/bin",
      pgpass: `${node.dir}/pgpass`,
      pg_hba: hba,
      // Trust on 127.0.0.1: the passwords are never checked; Patroni wants them present.
      authentication: {
        superuser: { username: "postgres", password: "postgres" },
        replication: { username: "replicator", password: "replicator" },
        rewind: { username: "postgres", password: "postgres" },
      },
      parameters: { unix_socket_directories: node.dir },
      // A rejoin that cannot rewind starts over from a base backup rather than staying out.
      remove_data_directory_on_rewind_failure: true,
      remove_data_directory_on_diverged_timelines: true,
    },
    tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
  };
}
