import { chmodSync, chownSync, cpSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync, appendFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { type Daemon, freeLocalPort, killGroup, type OsUser, osUser, pollUntil, postmasterPid, runCommand, startDaemon } from "./daemon";

/** Debian's PostgreSQL 15 binaries (the version the machine's server runs). */
export const pgBin = (name: string) => `/usr/lib/postgresql/15/bin/${name}`;

/** One PostgreSQL server on its own port and data folder, run as `postgres` when the test runs as root. */
export interface PgInstance {
  name: string;
  port: number;
  dataDir: string;
  url(db: string): string;
  /** Runs statements on one connection of its own as the superuser (in order) and returns the last one's rows. */
  // biome-ignore lint/suspicious/noExplicitAny: rows are read by the tests' own column names
  q(db: string, ...statements: (string | [string, unknown[]])[]): Promise<any[]>;
  /** A fast shutdown (SIGINT: active transactions rolled back, a checkpoint written); SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/**
 * A primary with WAL archiving as docs/operations.md "Backup and restore" sets it (wal_level replica, archive_mode on,
 * archive_command copying each finished segment into `archive/`), a base backup of it, and restores of that backup:
 * to a point in time or to the end of the archive, each a new server on its own port.
 */
export interface PgArchive {
  primary: PgInstance;
  archiveDir: string;
  /** pg_basebackup of the primary into `base/`: its size in bytes and how long it took. */
  baseBackup(): Promise<{ bytes: number; ms: number }>;
  /** Ends the current WAL segment so it is archived, and waits until the archiver copied it. */
  switchWal(): Promise<void>;
  /**
   * A copy of the base backup started in recovery with `restore_command` reading the archive: to `targetTime` (then
   * promoted) or, without one, to the end of the archive. Resolves once it accepts writes.
   */
  restore(name: string, o?: { targetTime?: string }): Promise<PgInstance & { ms: number }>;
  /** Stops every server started and removes nothing (the caller removes `dir`). */
  stopAll(): Promise<void>;
}

export async function startPgArchive(dir: string): Promise<PgArchive> {
  const user: OsUser | undefined = userInfo().uid === 0 ? await osUser("postgres") : undefined;
  const own = (path: string) => {
    if (user) chownSync(path, user.uid, user.gid);
  };
  mkdirSync(dir, { recursive: true });
  if (user) chmodSync(dir, 0o711);
  // The folders the servers write (the archive, sockets, the primary's data, the base backup): the server's user's.
  const folder = (name: string) => {
    const path = join(dir, name);
    mkdirSync(path, { mode: 0o700 });
    own(path);
    return path;
  };
  const archiveDir = folder("archive");
  const socketDir = folder("sockets");
  const instances: PgInstance[] = [];
  const daemons: Daemon[] = [];

  const start = async (name: string, dataDir: string, port: number): Promise<PgInstance> => {
    const daemon = startDaemon(`postgres-${name}`, pgBin("postgres"), ["-D", dataDir, "-p", String(port)], { log: join(dir, `${name}.log`), user });
    daemons.push(daemon);
    const url = (db: string) => `postgresql://postgres@127.0.0.1:${port}/${db}`;
    const instance: PgInstance = {
      name,
      port,
      dataDir,
      url,
      async q(db, ...statements) {
        const c = await connect(url(db));
        try {
          let rows: unknown[] = [];
          for (const s of statements) rows = (typeof s === "string" ? await c.query(s) : await c.query(s[0], s[1])).rows;
          return rows;
        } finally {
          await c.end().catch(() => undefined);
        }
      },
      async stop() {
        const pid = postmasterPid(dataDir);
        if (!pid) return;
        try {
          process.kill(pid, "SIGINT");
        } catch {
          return;
        }
        await pollUntil(`${name} to shut down`, 10_000, async () => postmasterPid(dataDir) === undefined).catch(() => killGroup(pid));
      },
    };
    instances.push(instance);
    return instance;
  };

  /** The settings appended to a data folder's postgresql.conf (every server of the drill archives). */
  const settings = (port: number, archive = true) =>
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${socketDir}'`,
      "max_connections = 100",
      "wal_level = replica",
      // Never overwrite a segment already archived.
      ...(archive ? ["archive_mode = on", `archive_command = 'test ! -f ${archiveDir}/%f && cp %p ${archiveDir}/%f'`] : ["archive_mode = off"]),
      "max_wal_senders = 4",
      // A test machine's disk: no fsync (the archive and recovery behave the same; a power cut is not under test).
      "fsync = off",
      "",
    ].join("\n");

  const connect = async (url: string) => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    c.on("error", () => {});
    await c.connect();
    return c;
  };
  const one = async <T>(url: string, sql: string): Promise<T> => {
    const c = await connect(url);
    try {
      return (await c.query(sql)).rows[0] as T;
    } finally {
      await c.end().catch(() => undefined);
    }
  };

  const primaryDir = folder("primary");
  await runCommand(pgBin("initdb"), ["-D", primaryDir, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale", "C"], { uid: user?.uid, gid: user?.gid });
  const primaryPort = await freeLocalPort();
  appendFileSync(join(primaryDir, "postgresql.conf"), settings(primaryPort));
  const primary = await start("primary", primaryDir, primaryPort);
  await pollUntil("the archived primary to accept connections", 30_000, () => one(primary.url("postgres"), "SELECT 1 AS ok"), 100);
  const baseDir = folder("base");

  return {
    primary,
    archiveDir,
    async baseBackup() {
      const started = Date.now();
      // -X none: the WAL the backup needs comes from the archive, as a restore from a backup server's copy would.
      await runCommand(pgBin("pg_basebackup"), ["-h", "127.0.0.1", "-p", String(primary.port), "-U", "postgres", "-D", baseDir, "-X", "none", "-c", "fast", "--no-sync"], {
        uid: user?.uid,
        gid: user?.gid,
      });
      return { bytes: folderBytes(baseDir), ms: Date.now() - started };
    },
    async switchWal() {
      const { walfile } = await one<{ walfile: string }>(primary.url("postgres"), "SELECT pg_walfile_name(pg_switch_wal()) AS walfile");
      await pollUntil(`WAL segment ${walfile} to be archived`, 30_000, async () => {
        const s = await one<{ last: string | null }>(primary.url("postgres"), "SELECT last_archived_wal AS last FROM pg_stat_archiver");
        return s.last !== null && s.last >= walfile;
      });
    },
    async restore(name, o = {}) {
      const started = Date.now();
      const dataDir = join(dir, name);
      rmSync(dataDir, { recursive: true, force: true });
      cpSync(baseDir, dataDir, { recursive: true, preserveTimestamps: true });
      if (user) await runCommand("chown", ["-R", `${user.uid}:${user.gid}`, dataDir]);
      chmodSync(dataDir, 0o700);
      const port = await freeLocalPort();
      const recovery = [
        // The restored servers do not archive: each would start a timeline 2 of its own in the same folder, and a
        // later restore follows the newest timeline it finds there (docs/operations.md: a fresh archive folder).
        settings(port, false),
        `restore_command = 'cp ${archiveDir}/%f %p'`,
        ...(o.targetTime ? [`recovery_target_time = '${o.targetTime}'`, "recovery_target_action = 'promote'"] : []),
        "",
      ].join("\n");
      appendFileSync(join(dataDir, "postgresql.conf"), recovery);
      writeFileSync(join(dataDir, "recovery.signal"), "");
      own(join(dataDir, "recovery.signal"));
      const instance = await start(name, dataDir, port);
      // Recovery replays the archive, then (to a time: promote; to the end: a new timeline) accepts writes.
      await pollUntil(`${name} to finish recovery`, 60_000, async () => !(await one<{ r: boolean }>(instance.url("postgres"), "SELECT pg_is_in_recovery() AS r")).r, 100);
      return { ...instance, ms: Date.now() - started };
    },
    async stopAll() {
      for (const i of [...instances].reverse()) await i.stop();
      for (const d of daemons) d.kill();
    },
  };
}

/** Bytes of every file below `dir`. */
function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}
