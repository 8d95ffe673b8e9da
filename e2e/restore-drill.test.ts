import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConnection } from "@holdfast/core/providers";
import { reconcileRestore } from "@holdfast/core/run";
import { parseGraph } from "@holdfast/core/versions";
import { createDb, type Db, migrate, urlAsRole } from "@holdfast/db";
import { type AppProcess, appEnv, createTestPrefix, publish, runCli, type SmtpTarget, spawnApp, startSmtpTarget, startTestRun, waitFor } from "@holdfast/testkit";
import { type PgArchive, type PgInstance, startPgArchive } from "@holdfast/testkit/cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The backup and restore drill (issue 46, docs/operations.md "Backup and restore"): a PostgreSQL 15 primary archives
 * its WAL; a base backup is taken; a run sends email 1, waits, sends email 2. The restore point T is read from the
 * database between the two sends. After the primary stops, the backup is restored twice from the archive: to T
 * (promoted: the new live database) and to the archive's end (the latest state). Before reconciling, the restored
 * ledger would hand send 2 a fresh claim (it would be sent again); `holdfast restore reconcile --latest` carries the
 * effect rows written after T, and carries whole a run that started after T (its webhook was acknowledged: no sender
 * repeats it); the product's processes started on the restored database finish both runs with no second copy of
 * any email; `holdfast doctor` finds nothing.
 */
const welcome = (pauseSeconds: number) => parseGraph({
  nodes: [
    { id: "t", kind: "trigger", config: { eventIdField: "id" } },
    { id: "send_1", kind: "send_email", config: { connection: "mail", subject: "Welcome", text: "Hello." } },
    { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: pauseSeconds } } },
    { id: "send_2", kind: "send_email", config: { connection: "mail", subject: "Getting started", text: "Next steps." } },
    { id: "done", kind: "end" },
  ],
  edges: [
    { from: "t", to: "send_1" },
    { from: "send_1", to: "pause" },
    { from: "pause", to: "send_2" },
    { from: "send_2", to: "done" },
  ],
});

let dir = "";
let archive: PgArchive;
let smtp: SmtpTarget;
let apps: AppProcess[] = [];
const dbs: Db[] = [];
const prefix = createTestPrefix();
const name = "holdfast_drill";

const processes = (url: string) => {
  const env = appEnv(url, prefix.prefix, { LOG_LEVEL: "info" });
  return [spawnApp("relay", { env }), spawnApp("engine", { env }), spawnApp("lane-worker", { env: { ...env, LANE: "io" } }), spawnApp("sweeper", { env })];
};
const startProcesses = async (url: string) => {
  apps = processes(url);
  await Promise.all(apps.map((a) => a.waitForOutput(/ready/, 60_000)));
};
const stopProcesses = async () => {
  await Promise.all(apps.map((a) => a.stop()));
  apps = [];
};
const query = (instance: PgInstance) => (sql: string, params: unknown[] = []) => instance.q(name, [sql, params]);
/** What the step claim would answer for send 2's key on the instance's database, rolled back (nothing is claimed). */
async function claimAnswer(instance: PgInstance, orgId: string, runId: string): Promise<{ claimed: boolean; row?: { status: string } }> {
  const probe = "SELECT holdfast_effect_claim($1, $2, 'probe', 'send_2', 1, 'send_email', 1, 60000) AS a";
  // Never committed: the connection closes inside the transaction, so the claim is rolled back.
  const rows = await instance.q(name, "BEGIN", [probe, [orgId, runId]]);
  return rows[0].a;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hf-restore-drill-"));
  archive = await startPgArchive(dir);
  await archive.primary.q("postgres", `CREATE DATABASE ${name}`);
  await migrate(archive.primary.url(name));
  smtp = await startSmtpTarget();
}, 120_000);

afterAll(async () => {
  await stopProcesses();
  for (const db of dbs) await db.$disconnect().catch(() => undefined);
  await smtp?.close();
  await archive?.stopAll();
  await prefix.clear();
  if (dir && !process.env.KEEP_DRILL) rmSync(dir, { recursive: true, force: true });
});

describe("restore to a point between two sends", () => {
  it("the run finishes on the restored database, neither email is sent twice, doctor is clean", async () => {
    const started = Date.now();
    const phase = (what: string) => console.log(`[drill] ${what} at ${Date.now() - started} ms`);
    const primary = archive.primary;
    const workerUrl = (i: PgInstance) => urlAsRole(i.url(name), "holdfast_worker");
    const db = createDb(workerUrl(primary), { poolSize: 2, applicationName: "holdfast-test" });
    dbs.push(db);
    const { orgId } = await publish(db, welcome(3), { automation: "welcome" });
    // The run started after T waits longer, so the primary stops while it waits and the restored database finishes it.
    await publish(db, welcome(30), { automation: "later" });
    await createConnection(db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "team@acme.test" }, secret: null });
    const backup = await archive.baseBackup();
    phase("base backup taken");

    await startProcesses(workerUrl(primary));
    phase("processes ready");
    const q = query(primary);
    const runId = await startTestRun(db, "welcome", { id: "evt_1", email: "ada@example.com" });
    await waitFor(async () => (await q("SELECT 1 FROM steps WHERE run_id = $1 AND node_id = 'send_1' AND status = 'done'", [runId])).length > 0, 30_000, "send 1 to settle");
    // T: after send 1 settled, before send 2 began (the wait lasts seconds; checked below from send 2's ledger row).
    // t as PostgreSQL writes it (recovery_target_time refuses ISO's "T"), iso for the CLI's --point: the same instant.
    const [{ t, iso }] = await q(`SELECT c::text AS t, to_char(c AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS iso FROM clock_timestamp() AS c`);
    phase("T read");
    const lateRunId = await startTestRun(db, "later", { id: "evt_2", email: "bo@example.com" });
    await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status === "completed", 30_000, "the run to complete");
    const effects = await q("SELECT key, status, first_attempt_at > $2::timestamptz AS after_t FROM effects WHERE run_id = $1 ORDER BY created_at", [runId, t]);
    expect(effects).toEqual([
      { key: `${runId}/send_1/1`, status: "settled", after_t: false },
      { key: `${runId}/send_2/1`, status: "settled", after_t: true },
    ]);
    await waitFor(async () => (await q("SELECT 1 FROM steps WHERE run_id = $1 AND node_id = 'send_1' AND status = 'done'", [lateRunId])).length > 0, 30_000, "the later run's send 1");
    await stopProcesses();
    expect((await q("SELECT key FROM effects WHERE run_id = $1", [lateRunId])).map((e) => e.key)).toEqual([`${lateRunId}/send_1/1`]);
    expect(smtp.received.length).toBe(3);
    await archive.switchWal();
    await primary.stop();
    phase("primary stopped");

    // The drill: restore to T (the new live database) and to the end of the archive (the latest state).
    const restored = await archive.restore("restored", { targetTime: t });
    const latest = await archive.restore("latest");
    phase("restored twice");
    const r = query(restored);
    expect((await r("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status).toBe("running");
    expect(await r("SELECT status FROM runs WHERE id = $1", [lateRunId])).toEqual([]);
    // Without the reconcile the restored ledger knows nothing of send 2: its step would claim a fresh key and send.
    expect((await claimAnswer(restored, orgId, runId)).claimed).toBe(true);

    // A --latest that is not this backup's copy (this machine's own server) is refused before anything is written.
    const wrong = runCli(workerUrl(restored), ["restore", "reconcile", "--point", iso, "--latest", "postgresql://holdfast_worker@127.0.0.1:5432/postgres", "--json"]);
    expect(wrong.status).toBe(65);
    expect(wrong.stderr).toMatch(/not copies of one backup/);
    expect((await claimAnswer(restored, orgId, runId)).claimed).toBe(true);
    const reconcile = runCli(workerUrl(restored), ["restore", "reconcile", "--point", iso, "--latest", workerUrl(latest), "--json"]);
    expect(reconcile.status, reconcile.stderr).toBe(0);
    const report = JSON.parse(reconcile.stdout);
    expect(report.effectsCarried).toEqual({ settled: 1, outcomeUnknown: 0, needsReview: 0 });
    expect(report.runsNotCarried).toEqual([]);
    expect(report.runsCarried).toBe(1);
    expect(report.runsMissing).toEqual([]);
    expect(report.emailMessages).toBe(1);
    const answer = await claimAnswer(restored, orgId, runId);
    expect(answer.claimed).toBe(false);
    expect(answer.row?.status).toBe("settled");
    // Twice is once (in this process: the CLI's own start costs seconds).
    const [restoredDb, latestDb] = [createDb(workerUrl(restored), { poolSize: 1 }), createDb(workerUrl(latest), { poolSize: 1 })];
    dbs.push(restoredDb, latestDb);
    const again = await reconcileRestore(restoredDb, latestDb, { point: new Date(iso) });
    expect([again.effectsCarried, again.runsCarried]).toEqual([{ settled: 0, outcomeUnknown: 0, needsReview: 0 }, 0]);
    await latestDb.$disconnect();
    await latest.stop();
    phase("reconciled");

    // The processes on the restored database: the run walks on from the wait; send 2 replays its stored answer.
    await prefix.clear();
    await startProcesses(workerUrl(restored));
    phase("processes ready on the restored database");
    const statuses = async () => (await r("SELECT status FROM runs WHERE id = ANY($1::text[])", [[runId, lateRunId]])).map((x) => x.status);
    await waitFor(async () => (await statuses()).join() === "completed,completed", 90_000, "both runs to complete on the restored database");
    const ids = smtp.received.map((m) => m.messageId);
    expect(ids.length).toBe(4);
    expect(new Set(ids).size).toBe(4);
    expect([...smtp.byKey().values()]).toEqual([1, 1, 1, 1]);
    const carried = await r("SELECT type FROM run_events WHERE run_id = $1 AND type = 'restore.run_carried'", [lateRunId]);
    expect(carried.length).toBe(1);
    const timeline = await r("SELECT type, data->>'note' AS note FROM run_events WHERE run_id = $1 AND type = 'restore.effects_carried'", [runId]);
    expect(timeline.length).toBe(1);
    expect(timeline[0].note).toMatch(/restored from a backup/);
    const doctor = runCli(workerUrl(restored), ["doctor", "--json"]);
    expect(doctor.status, doctor.stdout + doctor.stderr).toBe(0);
    expect(JSON.parse(doctor.stdout).findings.filter((f: { count: number }) => f.count > 0)).toEqual([]);
    for (const a of apps) expect(a.exits, a.name).toEqual([]);
    console.log(
      `restore drill: base backup ${(backup.bytes / 1e6).toFixed(1)} MB in ${backup.ms} ms; restore to T ${restored.ms} ms, to the end ${latest.ms} ms; ` +
        `carried ${JSON.stringify(report)}; emails in the sink ${smtp.received.length}; test body ${Date.now() - started} ms`,
    );
  }, 180_000);
});
