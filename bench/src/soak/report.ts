import type { FailoverFigures } from "./failovers";
import type { SoakResult } from "./soak";
import type { UpgradeFigures } from "./upgrade";

const n = (x: number, d = 0) => x.toLocaleString("en-GB", { maximumFractionDigits: d, minimumFractionDigits: d });
const pairs = (r: Record<string, number>) =>
  Object.entries(r)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${n(v)}`)
    .join(", ") || "-";

/** The soak's outcome for a person: the invariants with their figures, then the load, the faults and the timing. */
export function formatReport(r: SoakResult, o: { fullTimeline: boolean } = { fullTimeline: true }): string {
  const lines: string[] = [];
  const mode = r.cluster ? " --cluster" : r.upgrade ? ` --upgrade-from ${r.upgrade.from}` : "";
  lines.push("", `== holdfast ${r.cluster ? "cluster " : r.upgrade ? "upgrade " : ""}soak: ${r.ok ? "PASSED" : "FAILED"} (seed ${r.seed}; replay with: pnpm soak${mode} --runs ${r.runs} --seed ${r.seed}) ==`);
  if (r.cluster) lines.push(`on ${r.cluster.topology}`);
  if (r.error) lines.push(`error: ${r.error}`);
  for (const i of r.invariants) {
    lines.push(`${i.violations.length ? "FAIL" : "ok  "}  ${i.name}: ${i.figure}`);
    for (const v of i.violations) lines.push(`        ${v}`);
  }
  const f = r.figures;
  if (f) {
    lines.push("", "runs");
    lines.push(`  ${n(f.runs)} runs: ${pairs(f.byStatus)}; completed at ${pairs(f.endedAt)}; needs review ${n(f.needsReview)}, parked otherwise ${n(f.parkedOther)}`);
    if (Object.keys(f.failedReasons).length) lines.push(`  failed because: ${pairs(f.failedReasons)}`);
    if (f.uncertainOnEndedRuns.length) lines.push(`  effects left uncertain on ended runs (not in needs-review): ${f.uncertainOnEndedRuns.slice(0, 10).join(", ")}`);
    lines.push(`  ${n(f.steps)} steps, ${n(f.timers)} timers; effects ${pairs(f.effectsByKindStatus)}`);
    lines.push(`  deliveries: ${n(f.deliveries.total)} sent, ${n(f.deliveries.acked)} acknowledged, ${n(f.deliveries.attempts)} attempts, ${n(f.deliveries.answeredDuplicate)} redeliveries answered with the same run`);
    lines.push(`  approvals: ${pairs(f.approvalsByVia)}; replies consumed ${n(f.replies.consumed)}, reply waits timed out ${n(f.replies.timeouts)}`);
    lines.push(
      `  providers: HTTP ${n(f.http.keys)} keys / ${n(f.http.calls)} calls (${n(f.http.resent)} re-sent with the same key); CRM ${n(f.crm.records)} records / ${n(f.crm.puts)} PUTs; model ${n(f.model.calls)} calls for ${n(f.model.drafts)} drafts; SMTP ${n(f.smtp.messages)} messages / ${n(f.smtp.keys)} keys; Slack ${n(f.slack.messages)} posts, ${n(f.slack.updates)} updates`,
    );
  }
  const h = r.humans;
  lines.push(`  people: ${n(h.slackClicks)} Slack clicks, ${n(h.inboxClicks)} inbox clicks, ${n(h.decided)} decisions landed (${n(h.slackFallbacks)} Slack ones decided in the inbox; ${n(h.slackRefusedBeforeStored)} Slack clicks refused as "not for this message" before the post was stored, clicked again); replies ${n(h.repliesSmtp)} by SMTP, ${n(h.repliesApi)} by webhook, ${n(h.replyRetries)} retried`);
  for (const x of h.refusals.slice(0, 10)) lines.push(`    refused: ${x}`);
  if (r.upgrade) lines.push(...upgradeLines(r.upgrade));
  lines.push("", r.upgrade ? "faults (none at random in the upgrade soak)" : "faults");
  lines.push(`  planned: ${pairs(r.faults.planned)}`);
  lines.push(`  injected: ${pairs(r.faults.injected)} (SIGKILL exits seen by the supervisors: ${n(r.faults.killsSeen)})`);
  lines.push(`  by process kind: ${pairs(r.faults.byTarget)}`);
  lines.push(`  queue wrapper: ${pairs(r.faults.queue)}`);
  if (r.cluster?.failovers) lines.push(...failoverLines(r.cluster.failovers));
  const exits = r.ownExits.reduce<Record<string, number>>((m, e) => ((m[`${e.label.replace(/-\d+$/, "")} (${e.signal ?? `code ${e.code}`})`] = (m[`${e.label.replace(/-\d+$/, "")} (${e.signal ?? `code ${e.code}`})`] ?? 0) + 1), m), {});
  lines.push(`  exits the soak did not cause (restarted by the supervisor): ${pairs(exits)}`);
  for (const e of r.ownExits.slice(0, 5)) lines.push(`    ${e.label} exited (${e.signal ?? `code ${e.code}`}) after:\n${e.before.replace(/^/gm, "      | ")}`);
  // The console gets the faults, restarts and web availability; the CPU shares (every 10 s) only in --report's file.
  const timeline = o.fullTimeline ? r.timeline : r.timeline.filter((e) => !e.includes(" cpu %: ") && !e.includes(" db: "));
  lines.push("", `timeline (s after the first delivery)${o.fullTimeline ? "" : "; CPU shares and database sessions every 10 s in --report FILE"}`);
  for (const e of timeline) lines.push(`  ${e}`);
  lines.push("", "the sender's answers per 10 s (status count; 0 = no answer within 15 s, -1 = no connection)");
  for (const [at, row] of Object.entries(r.answers).sort(([a], [b]) => Number(a) - Number(b))) lines.push(`  ${at.padStart(5)} s: ${pairs(row)}`);
  if (r.dir) lines.push("", `logs of every process and of PostgreSQL kept in ${r.dir}`);
  const t = r.timing;
  lines.push("", "timing");
  lines.push(
    `  last delivery acknowledged at ${n(t.loadSeconds, 1)} s; last fault over at ${n(t.lastFaultSeconds, 1)} s; drained ${t.drainAfterLastFaultSeconds === null ? "never" : `${n(t.drainAfterLastFaultSeconds, 1)} s`} after it; ${n(t.runsPerSecond, 2)} runs/s from first delivery to drained; ${n(t.totalSeconds, 0)} s in all`,
  );
  return lines.join("\n");
}

/** The upgrade: the old release's build, the migration under traffic, each replacement and the senders' answers meanwhile. */
function upgradeLines(u: UpgradeFigures): string[] {
  const s = (x: number) => `${n(x, 1)} s`;
  return [
    "",
    `upgrade from ${u.from} to ${u.to}`,
    `  old release built from its sources: ${pairs(Object.fromEntries(Object.entries(u.build).map(([k, v]) => [k, Math.round(v)])))} (s)`,
    `  new release's holdfast migrate at ${s(u.migrate.at)} under traffic, ${s(u.migrate.seconds)}: ${u.migrate.applied.length ? `applied ${u.migrate.applied.join(", ")}` : "no migration newer than the old release's (the stored functions re-applied from their files)"}`,
    `  old processes on the new schema: ${n(u.oldOnNewSchema.runsEnded)} runs ended in the ${s(u.oldOnNewSchema.seconds)} they ran alone; the old webs acknowledged ${n(u.oldOnNewSchema.deliveriesAcked)} deliveries before the first front switch`,
    `  during the switch (${s(u.window.from)} to ${s(u.window.to)}): ${n(u.answered503)} deliveries answered 503, ${n(u.refusedConnections)} connections refused or cut; answers ${pairs(u.answers)}`,
    "  replacements (s after the first delivery: begun, old one stopped, new one ready):",
    ...u.replacements.map((x) => `    ${x.label.padEnd(14)} ${s(x.startedAt)}, ${s(x.oldStoppedAt)} (${x.oldExit.signal ?? `exit ${x.oldExit.code}`}), ${s(x.newReadyAt)}`),
  ];
}

/** The cluster soak's failovers: the senders' unavailability, the 503s meanwhile, and the cluster's own measure. */
function failoverLines(f: FailoverFigures): string[] {
  const s = (ms: { p50: number; max: number }) => `p50 ${n(ms.p50 / 1000, 1)} s, max ${n(ms.max / 1000, 1)} s`;
  const lines = ["  failovers (unavailable: the senders' first failed delivery after the kill to the first accepted one after it)"];
  for (const [name, x] of [["PostgreSQL", f.postgres], ["Redis", f.redis]] as const) {
    lines.push(`    ${name}: ${x.n}; unavailable ${s(x.unavailableMs)}; ${n(x.answered503)} answers 503 meanwhile (${n(x.with503RetryAfter)} with Retry-After); failover as the cluster measured it ${s(x.clusterMs)}`);
  }
  lines.push(`    database path cuts: ${f.cuts.n}; unavailable to the senders ${s(f.cuts.unavailableMs)}; ${n(f.cuts.answered503)} answers 503 meanwhile`);
  for (const e of f.each) {
    lines.push(`    ${n(e.atMs / 1000, 1)} s ${e.kind} ${e.target}: unavailable ${n(e.unavailableMs / 1000, 1)} s, ${e.answered503} x 503${e.clusterMs === null ? "" : `; cluster ${n(e.clusterMs / 1000, 1)} s`}`);
  }
  return lines;
}
