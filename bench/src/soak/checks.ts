import pg from "pg";
import { holdfastCli } from "./infra/cli";
import type { Delivery } from "./load";
import type { Providers } from "./world";

/** One asserted invariant: what it says, the figure it rests on, and what broke it (empty: it held). */
export interface Invariant {
  name: string;
  figure: string;
  violations: string[];
}

export interface Figures {
  runs: number;
  byStatus: Record<string, number>;
  /** Where completed runs ended (done / dropped), and why failed runs failed. */
  endedAt: Record<string, number>;
  failedReasons: Record<string, number>;
  needsReview: number;
  parkedOther: number;
  /** Effects whose outcome stayed unknown on runs that ended (providers that take a repeat), e.g. "model_draft on a failed run". */
  uncertainOnEndedRuns: string[];
  steps: number;
  timers: number;
  effectsByKindStatus: Record<string, number>;
  http: { keys: number; calls: number; resent: number };
  crm: { records: number; puts: number };
  model: { calls: number; drafts: number };
  smtp: { messages: number; keys: number };
  slack: { posts: number; messages: number; updates: number };
  approvalsByVia: Record<string, number>;
  replies: { consumed: number; timeouts: number };
  deliveries: { total: number; acked: number; attempts: number; answeredDuplicate: number };
}

const count = <T>(items: T[], key: (t: T) => string) => items.reduce<Record<string, number>>((m, t) => ((m[key(t)] = (m[key(t)] ?? 0) + 1), m), {});
const sample = (items: string[], n = 10) => (items.length > n ? [...items.slice(0, n), `... and ${items.length - n} more`] : items);

/**
 * The soak's invariants, read from the database (as its owner: every organisation's rows) and from what the
 * providers and the sender recorded. Each is computed, never assumed, so any one of them can fail.
 */
export async function checkInvariants(o: {
  /** The copy of the source the processes ran from (its CLI runs the doctor). */
  root: string;
  adminUrl: string;
  workerUrl: string;
  automationId: string;
  deliveries: Delivery[];
  runsWanted: number;
  providers: Providers;
  secretKey: string;
}): Promise<{ invariants: Invariant[]; figures: Figures; doctor: unknown }> {
  const c = new pg.Client({ connectionString: o.adminUrl });
  c.on("error", () => {}); // a lost connection fails the next query, which says so; unheard, the event ends the soak
  await c.connect();
  const q = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []) => (await c.query(sql, params)).rows as T[];
  try {
    const invariants: Invariant[] = [];
    const runs = await q<{ id: string; status: string; start_key: string; error: { message?: string; reason?: string } | null; end_node: string | null }>(
      `SELECT r.id, r.status, r.start_key, r.error,
              (SELECT e.node_id FROM run_events e WHERE e.run_id = r.id AND e.type = 'run.completed' ORDER BY e.id DESC LIMIT 1) AS end_node
       FROM runs r WHERE r.automation_id = $1`,
      [o.automationId],
    );
    const byKey = new Map(runs.map((r) => [r.start_key, r]));
    const runStatus = new Map(runs.map((r) => [r.id, r.status]));

    // 1. Every acknowledged delivery has exactly one run (and no run exists that no delivery asked for).
    const d1: string[] = [];
    for (const d of o.deliveries) {
      const run = byKey.get(`${o.automationId}:wh:${d.webhookId}`);
      if (d.runIds.length === 0) d1.push(`delivery ${d.i} (${d.webhookId}) was never acknowledged: ${d.refused.map((r) => `${r.status} ${r.body}`).join("; ") || `${d.attempts} attempts, last ${d.statuses.at(-1)}`}`);
      else if (new Set(d.runIds).size !== 1) d1.push(`delivery ${d.i} was answered with ${new Set(d.runIds).size} different runs: ${[...new Set(d.runIds)].join(", ")}`);
      else if (!run) d1.push(`delivery ${d.i} was acknowledged with ${d.runIds[0]} but no run has its start key`);
      else if (run.id !== d.runIds[0]) d1.push(`delivery ${d.i} was acknowledged with ${d.runIds[0]} but its start key belongs to ${run.id}`);
    }
    if (o.deliveries.length !== o.runsWanted) d1.push(`only ${o.deliveries.length} of ${o.runsWanted} deliveries were sent`);
    const acked = o.deliveries.filter((d) => d.runIds.length > 0);
    if (runs.length !== acked.length) d1.push(`${runs.length} runs exist for ${acked.length} acknowledged deliveries`);
    invariants.push({ name: "every acknowledged delivery has exactly one run", figure: `${acked.length} acknowledged deliveries, ${runs.length} runs`, violations: d1 });

    // 2. Every run is final, or parked with its reason (needs review included).
    const parked = await q<{ run_id: string; node_id: string; code: string | null; reason: string | null }>(
      `SELECT s.run_id, s.node_id, s.error->>'code' AS code, COALESCE(s.error->>'reason', s.error->>'message') AS reason
       FROM steps s JOIN runs r ON r.id = s.run_id WHERE r.automation_id = $1 AND r.status = 'running' AND s.status = 'parked'`,
      [o.automationId],
    );
    const parkedRuns = new Map(parked.map((p) => [p.run_id, p]));
    const open = await q<{ run_id: string; steps: string }>(
      `SELECT r.id AS run_id, COALESCE(string_agg(s.node_id || '#' || s.iteration || ':' || s.status, ', ' ORDER BY s.created_at) FILTER (WHERE s.status NOT IN ('done', 'failed')), '(no open step)') AS steps
       FROM runs r LEFT JOIN steps s ON s.run_id = r.id WHERE r.automation_id = $1 AND r.status = 'running' GROUP BY r.id`,
      [o.automationId],
    );
    const unfinished = open.filter((r) => !parkedRuns.has(r.run_id) || !parkedRuns.get(r.run_id)?.reason);
    invariants.push({
      name: "every run is final, or parked with its reason",
      figure: `${runs.length - open.length} final, ${parkedRuns.size} parked with a reason, ${unfinished.length} neither`,
      violations: sample(unfinished.map((r) => `${r.run_id} still running: ${r.steps}`)),
    });

    // 3. No step settled twice (a wait is settled by its timer or by its signal, never both).
    const settles = await q<{ id: string; run_id: string; node_id: string; iteration: number; status: string; kind: string; n: number; types: string }>(
      `SELECT s.id, s.run_id, s.node_id, s.iteration, s.status, s.kind, count(e.id)::int AS n, COALESCE(string_agg(e.type, ','), '') AS types
       FROM steps s JOIN runs r ON r.id = s.run_id
       LEFT JOIN run_events e ON e.step_id = s.id AND e.type IN ('step.succeeded', 'step.failed', 'step.skipped', 'timer.fired', 'signal.consumed')
       WHERE r.automation_id = $1 GROUP BY s.id, s.org_id`,
      [o.automationId],
    );
    const twice = settles.filter((s) => s.n > 1);
    const silent = settles.filter((s) => s.n === 0 && (s.status === "done" || s.status === "failed"));
    invariants.push({
      name: "no step settled twice",
      figure: `${settles.length} steps, ${settles.filter((s) => s.n === 1).length} settled once, ${twice.length} more than once`,
      violations: sample([
        ...twice.map((s) => `${s.run_id} ${s.node_id}#${s.iteration} (${s.kind}) settled ${s.n} times: ${s.types}`),
        ...silent.map((s) => `${s.run_id} ${s.node_id}#${s.iteration} (${s.kind}) is ${s.status} with no settle on its timeline`),
      ]),
    });

    // 4. Every timer fired once (or was closed by the signal that settled its wait), none left behind.
    const timers = await q<{ id: string; run_id: string; fired_at: Date | null; fired_by: string | null; firings: number; run_status: string }>(
      `SELECT t.id, t.run_id, t.fired_at, t.fired_by, r.status AS run_status,
              (SELECT count(*)::int FROM run_events e WHERE e.run_id = t.run_id AND e.type = 'timer.fired' AND e.data->>'timerId' = t.id) AS firings
       FROM timers t JOIN runs r ON r.id = t.run_id WHERE r.automation_id = $1`,
      [o.automationId],
    );
    const t4 = [
      ...timers.filter((t) => t.firings > 1).map((t) => `${t.run_id} timer ${t.id} fired ${t.firings} times`),
      ...timers.filter((t) => t.fired_by === "signal" && t.firings > 0).map((t) => `${t.run_id} timer ${t.id} was closed by a signal and also fired`),
      ...timers.filter((t) => !t.fired_at && t.run_status !== "running").map((t) => `${t.run_id} timer ${t.id} never fired (run ${t.run_status})`),
      ...timers.filter((t) => t.fired_at && t.fired_by !== "signal" && t.firings === 0).map((t) => `${t.run_id} timer ${t.id} closed by ${t.fired_by} without a timer.fired row`),
    ];
    invariants.push({
      name: "every timer fired once",
      figure: `${timers.length} timers: ${timers.filter((t) => t.firings === 1).length} fired once, ${timers.filter((t) => t.fired_by === "signal").length} closed by their signal`,
      violations: sample(t4),
    });

    // 5. De-duplicating providers acted once per effect key; 6. the plain SMTP sink at most once, the uncertain in review.
    const effects = await q<{ key: string; kind: string; status: string; run_id: string; step_status: string | null; step_code: string | null }>(
      `SELECT e.key, e.kind, e.status, e.run_id, s.status AS step_status, s.error->>'code' AS step_code
       FROM effects e JOIN runs r ON r.id = e.run_id LEFT JOIN steps s ON s.id = e.step_id WHERE r.automation_id = $1`,
      [o.automationId],
    );
    const ofKind = (kind: string, status?: string) => effects.filter((e) => e.kind === kind && (!status || e.status === status));
    const p = o.providers;
    const ledgerKeys = new Set(effects.map((e) => e.key));
    const d5: string[] = [];
    for (const e of ofKind("http_request", "settled")) if (!p.http.calls.get(e.key)) d5.push(`http effect ${e.key} settled but the target never received it`);
    for (const k of p.http.calls.keys()) if (!ledgerKeys.has(k)) d5.push(`the HTTP target acted on ${k}, which has no effect row`);
    // The CRM names records by the match key (the contact's email: one contact per run here) and answers a repeated
    // Idempotency-Key (the effect key) without applying it again: one write per key, each record written once.
    for (const e of ofKind("crm_upsert", "settled")) if (!p.crm.writes.has(e.key)) d5.push(`crm effect ${e.key} settled but the CRM applied no write with its key`);
    for (const k of p.crm.writes.keys()) if (!ledgerKeys.has(k)) d5.push(`the CRM applied a write with key ${k}, which has no effect row`);
    for (const r of p.crm.records.values()) if (r.version !== 1) d5.push(`CRM record ${r.externalId} was written ${r.version} times (one run is about this contact)`);
    const postsPer = count(p.slack.messages.filter((m) => m.metadata), (m) => m.metadata?.event_payload.approval_id ?? "");
    for (const [id, n] of Object.entries(postsPer)) if (n > 1) d5.push(`approval ${id} was posted to Slack ${n} times`);
    const httpCalls = [...p.http.calls.values()].reduce((a, b) => a + b, 0);
    invariants.push({
      name: "every de-duplicating provider acted once per effect key",
      figure: `HTTP ${p.http.effects()} keys acted on (${httpCalls} calls); CRM ${p.crm.writes.size} keys written, ${p.crm.records.size} records (${[...p.crm.upserts.values()].reduce((a, b) => a + b, 0)} PUTs); Slack ${Object.keys(postsPer).length} approvals posted, ${Math.max(0, ...Object.values(postsPer))} at most per approval`,
      violations: sample(d5),
    });

    const mails = p.smtp.byKey();
    const d6: string[] = [];
    for (const [k, n] of mails) if (n > 1) d6.push(`the plain SMTP sink got ${n} messages for ${k}`);
    for (const e of ofKind("send_email")) {
      const n = mails.get(e.key) ?? 0;
      if (e.status === "settled" && n !== 1) d6.push(`send ${e.key} settled but the sink got ${n} messages`);
      if (e.status === "needs_review" && !(e.step_status === "parked" && e.step_code === "needs_review")) d6.push(`send ${e.key} is uncertain but its step is ${e.step_status} (${e.step_code ?? "no code"}), not in needs-review`);
      if (e.status === "outcome_unknown" || e.status === "in_flight") d6.push(`send ${e.key} is still ${e.status} after the drain`);
    }
    for (const k of mails.keys()) if (!ledgerKeys.has(k)) d6.push(`the sink got ${k}, which has no effect row`);
    // Effects of providers that take a repeat (HTTP, CRM, model) may stay uncertain on a run that ended (its last
    // attempt lost its answer): reported below, not a broken promise. Held ones, or uncertain ones on a running run, are.
    for (const e of effects.filter((x) => x.kind !== "send_email" && (x.status === "in_flight" || (x.status === "outcome_unknown" && runStatus.get(x.run_id) === "running")))) {
      d6.push(`${e.kind} ${e.key} is still ${e.status} after the drain (run ${runStatus.get(e.run_id)})`);
    }
    const review = ofKind("send_email", "needs_review");
    invariants.push({
      name: "the plain SMTP sink got at most one message per key; every uncertain send is in needs-review",
      figure: `${p.smtp.received.length} messages for ${mails.size} keys; ${review.length} uncertain sends, ${review.filter((e) => (mails.get(e.key) ?? 0) === 1).length} of them delivered, all in needs-review`,
      violations: sample(d6),
    });

    // 7. holdfast doctor finds nothing.
    const doctor = holdfastCli(o.root, ["doctor", "--json"], { DATABASE_URL: o.workerUrl, HOLDFAST_SECRET_KEY: o.secretKey });
    let findings: { check: string; count: number; examples: { runId: string; detail: string }[] }[] = [];
    const d7: string[] = [];
    try {
      findings = (JSON.parse(doctor.stdout) as { findings: typeof findings }).findings;
    } catch {
      d7.push(`holdfast doctor did not answer with JSON (exit ${doctor.status}): ${doctor.stderr.slice(-500)}`);
    }
    for (const f of findings.filter((x) => x.count > 0)) d7.push(`${f.check}: ${f.count} (${f.examples.map((e) => `${e.runId} ${e.detail}`).join("; ")})`);
    invariants.push({ name: "holdfast doctor finds nothing", figure: `${findings.length} checks, ${findings.filter((f) => f.count > 0).length} with findings`, violations: d7 });

    const approvals = await q<{ decided_via: string | null; status: string }>(
      "SELECT a.decided_via, a.status FROM approvals a JOIN runs r ON r.id = a.run_id WHERE r.automation_id = $1",
      [o.automationId],
    );
    const waits = settles.filter((s) => s.kind === "wait_for_reply");
    const figures: Figures = {
      runs: runs.length,
      byStatus: count(runs, (r) => r.status),
      endedAt: count(runs.filter((r) => r.status === "completed"), (r) => r.end_node ?? "?"),
      failedReasons: count(runs.filter((r) => r.status === "failed"), (r) => (r.error?.message ?? r.error?.reason ?? JSON.stringify(r.error)).slice(0, 120)),
      needsReview: parked.filter((x) => x.code === "needs_review").length,
      parkedOther: parked.filter((x) => x.code !== "needs_review").length,
      uncertainOnEndedRuns: effects
        .filter((e) => e.status === "outcome_unknown" && runStatus.get(e.run_id) !== "running")
        .map((e) => `${e.key} (${e.kind}, run ${runStatus.get(e.run_id)})`),
      steps: settles.length,
      timers: timers.length,
      effectsByKindStatus: count(effects, (e) => `${e.kind}:${e.status}`),
      http: { keys: p.http.effects(), calls: httpCalls, resent: httpCalls - p.http.calls.size },
      crm: { records: p.crm.records.size, puts: [...p.crm.upserts.values()].reduce((a, b) => a + b, 0) },
      model: { calls: p.model.calls, drafts: ofKind("model_draft", "settled").length },
      smtp: { messages: p.smtp.received.length, keys: mails.size },
      slack: { posts: p.slack.posts, messages: p.slack.messages.length, updates: p.slack.updates.length },
      approvalsByVia: count(approvals, (a) => `${a.status} via ${a.decided_via ?? "-"}`),
      replies: { consumed: waits.filter((s) => s.types.includes("signal.consumed")).length, timeouts: waits.filter((s) => s.types.includes("timer.fired")).length },
      deliveries: {
        total: o.deliveries.length,
        acked: acked.length,
        attempts: o.deliveries.reduce((a, d) => a + d.attempts, 0),
        answeredDuplicate: o.deliveries.reduce((a, d) => a + Math.max(0, d.runIds.length - 1), 0),
      },
    };
    return { invariants, figures, doctor: findings };
  } finally {
    await c.end();
  }
}
