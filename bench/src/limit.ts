import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import pg from "pg";
import type { Meter } from "./measure/meter";

/**
 * The database's limit for Holdfast's step transition, measured with pgbench on copies of the real tables: the writes
 * of a chained step in the engine's one commit (see the script). The last UPDATE puts the row back to running so the
 * next transaction on it can settle it again (and the same for its effect), which costs pgbench two writes more than
 * the engine.
 */
export async function measureLimit(meter: Meter, url: string, dbName: string, seconds: number, clients: number, withEffects = true, batch = 1) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  for (const t of ["steps", "runs", "outbox", "run_events", "effects"]) {
    await c.query(`DROP TABLE IF EXISTS pb_${t}`);
    await c.query(`CREATE TABLE pb_${t} (LIKE ${t} INCLUDING DEFAULTS INCLUDING INDEXES INCLUDING CONSTRAINTS)`);
    // LIKE copies no storage parameters: the real table's (runs' fillfactor) too, so the copy's updates are HOT alike.
    const { rows } = await c.query<{ options: string[] | null }>(`SELECT reloptions AS options FROM pg_class WHERE oid = $1::regclass`, [t]);
    if (rows[0]?.options?.length) await c.query(`ALTER TABLE pb_${t} SET (${rows[0].options.join(", ")})`);
  }
  await c.query(`INSERT INTO pb_runs (id, org_id, automation_id, version_id, start_key, input)
                 SELECT 'run_' || g, 'org', 'aut', 'ver', 'k' || g, '{}' FROM generate_series(1, 2000) g`);
  await c.query(`INSERT INTO pb_steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts)
                 SELECT 'stp_' || g, 'org', 'run_' || g, 's1', 1, 'http_request', 'io', 8 FROM generate_series(1, 2000) g`);
  await c.query(`INSERT INTO pb_effects (org_id, run_id, step_id, key, kind, status, owner, lease_until)
                 SELECT 'org', 'run_' || g, 'stp_' || g, 'k_' || g, 'http_request', 'in_flight', 'w', now() + interval '1 day'
                 FROM generate_series(1, 2000) g`);
  await c.end();
  // One transaction per step, as a chained effect step commits: the settle (step UPDATE + its event + its effect's
  // answer; the event says the next step's claim, data.chained), the run's seq, the next step inserted already claimed by
  // this worker (no row of its own in the timeline) and its effect claimed. With `batch` > 1, the writes of that many steps in one transaction, as a settle
  // batch commits them (group commit): each client then takes `batch` consecutive rows (from a random one, wrapping) of
  // its own share of the 2,000, so two transactions never wait on each other's rows, as two lane workers' batches
  // never share a step, and its writes spread over as many rows as one client's do with a step a commit.
  const block = (r: string, n: string) => `UPDATE pb_steps SET status = 'done', output = '{"status": 200, "body": {"ok": true}}', owner = NULL, lease_until = NULL, settled_at = now(), updated_at = now(), advanced_at = now() WHERE id = 'stp_' || ${r};
UPDATE pb_effects SET status = 'settled', result = '{"status": 200, "body": {"ok": true}}', owner = NULL, lease_until = NULL, settled_at = now(), updated_at = now() WHERE org_id = 'org' AND key = 'k_' || ${r};
INSERT INTO pb_run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data) VALUES ('org', 'run_' || ${r}, 'stp_' || ${r}, 's1', 1, 'step.succeeded', 'io', 'w', '{"chained": {"nodeId": "s2", "iteration": 1}}');
UPDATE pb_runs SET seq = seq + 1 WHERE id = 'run_' || ${r};
INSERT INTO pb_steps (org_id, run_id, node_id, iteration, kind, lane, max_attempts, status, owner, attempt, lease_until) VALUES ('org', 'run_' || ${r}, 's1', ${n}, 'http_request', 'io', 8, 'running', 'w', 1, now() + interval '30 seconds');
INSERT INTO pb_effects (org_id, run_id, step_id, key, kind, status, owner, lease_until) VALUES ('org', 'run_' || ${r}, 'stp_x', 'k_' || ${r} || '_' || ${n}, 'http_request', 'in_flight', 'w', now() + interval '30 seconds') ON CONFLICT DO NOTHING;
UPDATE pb_effects SET status = 'in_flight', owner = 'w', lease_until = now() + interval '1 day', settled_at = NULL WHERE org_id = 'org' AND key = 'k_' || ${r};
UPDATE pb_steps SET status = 'running', owner = 'w', lease_until = now() + interval '30 seconds', settled_at = NULL, advanced_at = NULL WHERE id = 'stp_' || ${r};
`;
  const share = Math.floor(2000 / clients);
  if (batch > share) throw new Error(`measureLimit: ${clients} clients x ${batch} steps a commit need more than the 2,000 rows made`);
  let script =
    batch === 1
      ? `\\set r random(1, 2000)\n\\set n random(2, 2000000000)\nBEGIN;\n${block(":r", ":n")}COMMIT;\n`
      : `\\set s random(0, ${share - 1})\n\\set n random(2, 2000000000)\nBEGIN;\n${Array.from({ length: batch }, (_, i) => block(`(:client_id * ${share} + (:s + ${i}) % ${share} + 1)`, `(:n + ${i})`)).join("")}COMMIT;\n`;
  if (!withEffects) script = script.split("\n").filter((l) => !l.includes("pb_effects")).join("\n");
  const file = join(tmpdir(), `holdfast-step-${process.pid}.sql`);
  writeFileSync(file, script);
  const u = new URL(url);
  const child = spawn(
    "pgbench",
    ["-n", "-M", "prepared", "-h", u.hostname, "-p", u.port || "5432", "-U", decodeURIComponent(u.username || "postgres"), "-c", String(clients), "-j", "2", "-T", String(seconds), "-f", file, dbName],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const window = await meter.begin(dbName, [{ name: "pgbench", pid: () => child.pid }]);
  await new Promise((resolve) => child.on("exit", resolve));
  await window.done();
  const m = await window.end();
  const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? Number.NaN);
  if (!Number.isFinite(tps)) throw new Error(`pgbench failed: ${out}`);
  const transitions = tps * seconds * batch;
  const pgCpu = Object.values(m.pgCpu).reduce((a, b) => a + b, 0);
  return {
    stepsPerSec: tps * batch,
    commitsPerStep: m.commits / transitions,
    walBytesPerStep: m.walBytes / transitions,
    walBytesServerPerStep: m.walBytesServer / transitions,
    pgCpuMsPerStep: (pgCpu * 1000) / transitions,
    load: m.load,
  };
}
