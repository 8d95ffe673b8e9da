import { publishBenchAutomation } from "../publish";
import { publicationsOf } from "@holdfast/core/run";
import { parseGraph } from "@holdfast/core/versions";
import type { Db } from "@holdfast/db";
import { createPublisher } from "@holdfast/queue";
import type pg from "pg";

/**
 * The 09:00 spike's waits, written in bulk: for each organisation, runs of a published `trigger -> wait -> end`
 * automation that are waiting on their wait step, each with its timer, its `timer.due` outbox row and the timeline
 * rows a real start writes (run.started, timer.scheduled), all as the start path leaves them (compare
 * run/start/start-run.ts and store/sql/timers.ts timersInsert). Only the history is skipped: the runs did not really start
 * over the past days, so their delayed jobs are published here, as the relay published them then.
 */
export const waitRule = { kind: "next_weekday", at: "09:00" } as const;
export const waitZone = "Europe/Berlin";

export function spikeGraph(spreadSeconds: number) {
  return parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "w", kind: "wait", config: { rule: waitRule, zone: waitZone, spreadSeconds } },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "w" },
      { from: "w", to: "e" },
    ],
  });
}

export interface SpikeOrg {
  slug: string;
  orgId: string;
  automationId: string;
  versionId: string;
  waits: number;
}

/** `orgs` organisations, the first holding half of the waits and the rest sharing the other half. */
export async function createOrgs(db: Db, orgs: number, waits: number, spreadSeconds: number): Promise<SpikeOrg[]> {
  const big = orgs > 1 ? Math.round(waits / 2) : waits;
  const rest = waits - big;
  const out: SpikeOrg[] = [];
  for (let i = 0; i < orgs; i++) {
    const slug = `spike-${String(i).padStart(3, "0")}`;
    const n = i === 0 ? big : Math.floor(rest / (orgs - 1)) + (i - 1 < rest % (orgs - 1) ? 1 : 0);
    const p = await publishBenchAutomation(db, { orgSlug: slug, orgName: slug, automationSlug: "nine", automationName: "09:00", graph: spikeGraph(spreadSeconds) });
    out.push({ slug, orgId: p.orgId, automationId: p.automationId, versionId: p.versionId, waits: n });
  }
  return out;
}

/**
 * Writes the waits of these organisations in statements of about 10,000, due at `dueAt` plus each run's spread
 * offset (hash(run id) mod spread, as decide/timers/schedule.ts spreadOffsetSeconds computes it). Their `timer.due` rows
 * are written as sent, as the relay leaves them after publishing.
 */
export async function writeWaits(sql: pg.Client, orgs: SpikeOrg[], dueAt: string, spreadSeconds: number): Promise<number> {
  let written = 0;
  const batches: SpikeOrg[][] = [[]];
  let size = 0;
  for (const org of orgs) {
    let left = org.waits;
    let from = 1;
    while (left > 0) {
      const take = Math.min(left, 10_000 - size);
      (batches.at(-1) as SpikeOrg[]).push({ ...org, waits: take, slug: `${org.slug}:${from}` });
      size += take;
      left -= take;
      from += take;
      if (size >= 10_000) {
        batches.push([]);
        size = 0;
      }
    }
  }
  for (const batch of batches.filter((b) => b.length)) {
    const { rows } = await sql.query(
      `WITH src AS (
         SELECT x.org_id, x.aut_id, x.ver_id, x.first + g - 1 AS n,
                holdfast_ordered_id('run_') AS run_id,
                holdfast_ordered_id('stp_') AS step_id,
                holdfast_ordered_id('tmr_') AS timer_id
         FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::int[]) AS x(org_id, aut_id, ver_id, first, count)
         CROSS JOIN LATERAL generate_series(1, x.count) AS g
       ), t AS (
         SELECT src.*, CASE WHEN $7::int > 0
                          THEN (('x' || substr(encode(sha256(convert_to(run_id, 'UTF8')), 'hex'), 1, 8))::bit(32)::bigint % $7::int)::int
                          ELSE 0 END AS off
         FROM src
       ), timed AS (
         SELECT t.*, $6::timestamptz + make_interval(secs => off) AS due_at FROM t
       ), r AS (
         INSERT INTO runs (id, org_id, automation_id, version_id, start_key, input, seq)
         SELECT run_id, org_id, aut_id, ver_id, aut_id || ':ev:spike-' || n, jsonb_build_object('id', 'spike-' || n), 1 FROM timed
       ), s AS (
         INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, status, max_attempts)
         SELECT step_id, org_id, run_id, 'w', 1, 'wait', 'human', 'waiting', 1 FROM timed
       ), tm AS (
         INSERT INTO timers (id, org_id, run_id, step_id, rule, zone, zone_source, spread_seconds, spread_offset_seconds, anchor_at, due_at)
         SELECT timer_id, org_id, run_id, step_id, $8::jsonb, $9, 'node', $7::int, off, now(), due_at FROM timed
       ), o AS (
         INSERT INTO outbox (org_id, run_id, topic, payload, sent_at)
         SELECT org_id, run_id, 'timer.due',
                jsonb_build_object('orgId', org_id, 'runId', run_id, 'timerId', timer_id, 'wake', 1, 'dueAt', due_at), now()
         FROM timed
       ), e AS (
         INSERT INTO run_events (org_id, run_id, step_id, node_id, type, worker, data)
         SELECT org_id, run_id, NULL, NULL, 'run.started', NULL, jsonb_build_object('via', 'bench-spike', 'version', 1, 'startKey', aut_id || ':ev:spike-' || n) FROM timed
         UNION ALL
         SELECT org_id, run_id, step_id, 'w', 'timer.scheduled', 'start',
                jsonb_build_object('rule', $8::jsonb, 'zone', $9, 'dueAt', due_at, 'timerId', timer_id, 'zoneSource', 'node', 'spreadOffsetSeconds', off)
         FROM timed
       )
       SELECT count(*)::int AS n FROM timed`,
      [
        batch.map((o) => o.orgId),
        batch.map((o) => o.automationId),
        batch.map((o) => o.versionId),
        batch.map((o) => Number(o.slug.split(":")[1])),
        batch.map((o) => o.waits),
        dueAt,
        spreadSeconds,
        JSON.stringify(waitRule),
        waitZone,
      ],
    );
    written += rows[0].n;
  }
  // Written in seconds, where a deployment's waits accumulate over days with autovacuum analyzing the tables as they
  // grow. Without statistics (autovacuum is off on the bench machine) the planner guessed a walk's `steps` lookup
  // by (org_id, run_id) would do as well by ANDing the organisation's index, and read all 50,000 entries of the big
  // organisation for every run: 1.3 ms instead of 0.05 (seen at 10,000 waits). Analyzed, as autovacuum would.
  await sql.query("ANALYZE runs, steps, timers, outbox, run_events");
  return written;
}

/**
 * The fast path's delayed jobs, as relayOnce publishes them (core/relay/relay.ts): its batches of 200 rows, each batch's
 * timers due at one instant as one `timers.due` job (run/relay/publications.ts), delayed until due_at by the database
 * clock. In an order shuffled across organisations
 * (by a digest of the timer id), as a relay publishes them when the waits begin over the weekend: the seed writes
 * them organisation by organisation, and BullMQ hands out the jobs for one instant in the order they were added (a
 * job added later ends its delay later), so publishing in the seed's order would put one organisation's timers at the
 * front of every second's burst and another's at the back, an order no real sender produces.
 */
export async function publishDelayedJobs(sql: pg.Client, redisUrl: string, prefix: string): Promise<{ timers: number; jobs: number }> {
  const publisher = createPublisher({ redis: redisUrl, prefix });
  const published = { timers: 0, jobs: 0 };
  let after = "";
  try {
    for (;;) {
      const { rows } = await sql.query(
        `SELECT id, md5(id) AS shuffle, jsonb_build_object('orgId', org_id, 'runId', run_id, 'timerId', id, 'wake', wake, 'dueAt', due_at) AS payload,
                GREATEST(0, EXTRACT(EPOCH FROM due_at - now()) * 1000)::float8 AS delay
         FROM timers WHERE md5(id) > $1 ORDER BY md5(id) LIMIT 2000`,
        [after],
      );
      if (!rows.length) return published;
      // As the relay's batches of RELAY_BATCH_SIZE (200) rows: the timers of a batch due at one instant are one job.
      const unsent = rows.map((r) => ({ id: 0n, topic: "timer.due", payload: r.payload, jobId: `${r.id}_1`, delayMs: r.delay }));
      const jobs = Array.from({ length: Math.ceil(unsent.length / 200) }, (_, i) => publicationsOf(unsent.slice(i * 200, i * 200 + 200)));
      await Promise.all(jobs.map((batch) => publisher.publishMany(batch)));
      published.timers += rows.length;
      published.jobs += jobs.flat().length;
      after = rows.at(-1).shuffle;
    }
  } finally {
    await publisher.close();
  }
}
