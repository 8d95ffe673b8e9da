import { type Db, inTx, type Tx } from "@holdfast/db";
import { z } from "zod";
import { applyPlan } from "../apply/apply";
import { HoldfastError, NotFoundError } from "../../base/errors";
import { approvalsCancelPendingForMigration, approvalsRenameNode } from "../../store/sql/approvals";
import { automationVersionsPublishedPair } from "../../store/sql/automation-versions";
import { runEventsInsert, runEventsRenameChained } from "../../store/sql/run-events";
import { runMigrationsInsert, runMigrationsRecordApply } from "../../store/sql/run-migrations";
import {
  type RunRow,
  runsCountRunningOnVersion,
  runsHasWorkInFlight,
  runsLockForWalk,
  runsRequestCancel,
  runsRunningOnVersion,
  runsRunningOnVersionAfter,
  runsSetVersion,
  runsTouch,
} from "../../store/sql/runs";
import { type StepRow, stepsCancelOpen, stepsForRun, stepsMarkAdvanced, stepsRenameNode, stepsWaitingAt } from "../../store/sql/steps";
import { isStepKind, kindOf } from "../../versions/kinds/registry";
import { type Graph, graphSchema } from "../../versions/graph";
import type { GraphCache } from "../../versions/graph-cache";
import { timersLockUnfiredOfRun, timersPending, timersReschedule, timersUnfiredForStep } from "../../store/sql/timers-pending";
import { canonicalJson } from "../../base/json";
import { instantFor } from "../../decide/timers/plan";
import { planForRun, planStepAt } from "../../decide/walk/plan";

/**
 * Moving in-flight runs of one published version to another, as an explicit step after publishing. The plan maps
 * old step ids to new ones (same id by default) and says what happens to a run sitting on a step the new version
 * removed: move it to a chosen step, cancel it, or let it stay on its version. `planMigration` is the dry run (where
 * each run sits and where it would land); `applyMigration` moves runs in batches, each run in its own transaction
 * under its lock, with a `run.migrated` timeline row (from/to version and step). A run with an effect in flight is
 * not moved (deferred) until it settles: apply again later.
 */
const slug = z.string().regex(/^[a-z][a-z0-9_]{0,62}$/);
export const removedRule = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("move"), to: slug }).strict(),
  z.object({ kind: z.literal("cancel") }).strict(),
  z.object({ kind: z.literal("stay") }).strict(),
]);
export type RemovedRule = z.infer<typeof removedRule>;
export const migrationInput = z
  .object({
    fromVersion: z.number().int().min(1),
    toVersion: z.number().int().min(1),
    mapping: z.record(slug, slug).default({}),
    removed: removedRule.default({ kind: "stay" }),
  })
  .strict();
export type MigrationInput = z.infer<typeof migrationInput>;

export type Landing =
  | { action: "keep" | "rename" | "move"; to: string }
  | { action: "cancel" | "stay" };

export interface RunPlan {
  runId: string;
  from: string;
  landing: Landing;
  deferred: boolean;
}

export interface MigrationPlan {
  fromVersion: number;
  toVersion: number;
  /** Per step the runs sit on: how many, where they land, how many wait for an effect in flight. */
  positions: { from: string; runs: number; deferred: number; landing: Landing }[];
  runs: RunPlan[];
}

/** Where a run sits: its open step, or the settled step the engine has yet to walk on from. */
function positionOf(steps: StepRow[]): string {
  const open = steps.find((s) => s.status === "ready" || s.status === "running" || s.status === "waiting" || s.status === "parked");
  if (open) return open.nodeId;
  const unwalked = steps.find((s) => !s.advanced && (s.status === "done" || s.status === "failed"));
  return unwalked?.nodeId ?? "(start)";
}

/** Where a run on `from` lands in `to` (pure). A step whose kind changed counts as removed. */
export function landingFor(from: string, oldGraph: Graph, newGraph: Graph, input: Pick<MigrationInput, "mapping" | "removed">): Landing {
  if (from === "(start)") return { action: "stay" }; // not walked yet: it starts on the version it was started on
  const target = input.mapping[from] ?? from;
  const oldNode = oldGraph.nodes.find((n) => n.id === from);
  const newNode = newGraph.nodes.find((n) => n.id === target);
  if (newNode && (!oldNode || oldNode.kind === newNode.kind)) return { action: target === from ? "keep" : "rename", to: target };
  const rule = input.removed;
  return rule.kind === "move" ? { action: "move", to: rule.to } : { action: rule.kind };
}

interface Versions {
  automationId: string;
  fromId: string;
  toId: string;
  fromGraph: Graph;
  toGraph: Graph;
}

async function versionsOf(db: Db | Tx, orgId: string, automationId: string, input: MigrationInput): Promise<Versions> {
  const rows = await automationVersionsPublishedPair(db, orgId, automationId, input.fromVersion, input.toVersion);
  const from = rows.find((r) => r.version === input.fromVersion);
  const to = rows.find((r) => r.version === input.toVersion);
  if (!from || !to) throw new NotFoundError("automation_not_found", `published versions ${input.fromVersion} and ${input.toVersion}`);
  if (from.id === to.id) throw new HoldfastError("invalid_migration", "choose two different versions");
  const toGraph = graphSchema.parse(to.graph);
  if (input.removed.kind === "move") {
    const target = toGraph.nodes.find((n) => n.id === (input.removed as { to: string }).to);
    if (!target || !isStepKind(kindOf(target.kind))) throw new HoldfastError("invalid_migration", `"${input.removed.to}" is not a step of version ${input.toVersion}`);
  }
  const fromGraph = graphSchema.parse(from.graph);
  const oldIds = new Set(fromGraph.nodes.map((n) => n.id));
  const targets = new Set<string>();
  for (const [old, target] of Object.entries(input.mapping)) {
    if (old === target) continue;
    if (!toGraph.nodes.some((n) => n.id === target)) throw new HoldfastError("invalid_migration", `${old} -> ${target}: no step "${target}" in version ${input.toVersion}`);
    // Renames rewrite the runs' step history: one old id per new id, and never onto an id the old version has.
    if (targets.has(target)) throw new HoldfastError("invalid_migration", `two steps map to "${target}": a mapping is one to one`);
    if (oldIds.has(target)) throw new HoldfastError("invalid_migration", `"${target}" is a step of version ${input.fromVersion} too: map onto a new id`);
    targets.add(target);
  }
  return { automationId, fromId: from.id, toId: to.id, fromGraph, toGraph };
}

export async function planMigration(db: Db, orgId: string, automationId: string, raw: unknown): Promise<MigrationPlan> {
  const input = migrationInput.parse(raw);
  const v = await versionsOf(db, orgId, automationId, input);
  const runs = await runsRunningOnVersion(db, orgId, v.fromId);
  const plans: RunPlan[] = [];
  for (const r of runs) {
    const steps = await stepsForRun(db, orgId, r.id);
    const from = positionOf(steps);
    const landing = landingFor(from, v.fromGraph, v.toGraph, input);
    plans.push({ runId: r.id, from, landing, deferred: landing.action !== "stay" && (await runsHasWorkInFlight(db, r.id)) });
  }
  const byPosition = new Map<string, MigrationPlan["positions"][number]>();
  for (const p of plans) {
    const pos = byPosition.get(p.from) ?? { from: p.from, runs: 0, deferred: 0, landing: p.landing };
    pos.runs++;
    if (p.deferred) pos.deferred++;
    byPosition.set(p.from, pos);
  }
  return { fromVersion: input.fromVersion, toVersion: input.toVersion, positions: [...byPosition.values()], runs: plans };
}

export interface ApplyReport {
  migrationId: string;
  migrated: number;
  cancelled: number;
  stayed: number;
  deferred: number;
  /** Runs still on the old version that a later apply may move (deferred ones). */
  remaining: number;
}

/** Records the plan (once) and moves the runs it can, `batchSize` at a time. Apply again to move deferred runs. */
export async function applyMigration(
  db: Db,
  graphs: GraphCache,
  orgId: string,
  automationId: string,
  raw: unknown,
  by: string,
  opts: { migrationId?: string; batchSize?: number } = {},
): Promise<ApplyReport> {
  const input = migrationInput.parse(raw);
  const v = await versionsOf(db, orgId, automationId, input);
  const migrationId =
    opts.migrationId ??
    (await runMigrationsInsert(db, { orgId, automationId, fromVersionId: v.fromId, toVersionId: v.toId, mapping: input.mapping, removed: input.removed, by }));
  if (!migrationId) throw new Error("migration not recorded");
  const report = { migrated: 0, cancelled: 0, stayed: 0, deferred: 0, gone: 0 };
  const batchSize = opts.batchSize ?? 100;
  let after = "";
  for (;;) {
    const batch = await runsRunningOnVersionAfter(db, orgId, v.fromId, after, batchSize);
    if (batch.length === 0) break;
    for (const r of batch) {
      const outcome = await inTx(db, (tx) => migrateOne(tx, graphs, orgId, r.id, v, input, migrationId, by));
      report[outcome]++;
    }
    after = batch.at(-1)?.id ?? after;
  }
  // Runs that stay by the rule never move; every other run still on the old version is left to move.
  const remaining = (await runsCountRunningOnVersion(db, orgId, v.fromId)) - report.stayed;
  await runMigrationsRecordApply(db, migrationId, { ...report, open: remaining > 0 });
  const { gone: _, ...counts } = report;
  return { migrationId, ...counts, remaining };
}

async function migrateOne(
  tx: Tx,
  graphs: GraphCache,
  orgId: string,
  runId: string,
  v: Versions,
  input: MigrationInput,
  migrationId: string,
  by: string,
): Promise<"migrated" | "cancelled" | "stayed" | "deferred" | "gone"> {
  const run = await runsLockForWalk(tx, orgId, runId);
  if (run?.status !== "running" || run.versionId !== v.fromId) return "gone"; // finished (or moved) meanwhile
  // A timer firing now waits for this transaction (before its steps are read: a wait that settled first is seen).
  await timersLockUnfiredOfRun(tx, orgId, runId);
  const steps = await stepsForRun(tx, orgId, runId);
  const from = positionOf(steps);
  const landing = landingFor(from, v.fromGraph, v.toGraph, input);
  if (landing.action === "stay") return "stayed";
  if (await runsHasWorkInFlight(tx, runId)) return "deferred";
  const event = (type: string, data: Record<string, unknown>) =>
    runEventsInsert(tx, [{ orgId, runId, type, worker: by, data: { migrationId, fromVersion: input.fromVersion, toVersion: input.toVersion, fromStep: from, ...data } }]);
  if (landing.action === "cancel") {
    await runsRequestCancel(tx, orgId, runId, `migration to version ${input.toVersion}: step ${from} was removed`);
    await event("run.migration_cancelled", {});
    const graph = await graphs.get(tx, orgId, v.fromId);
    await applyPlan(tx, graph, { ...run, cancelRequested: true }, steps, planForRun(graph, { id: run.id, status: "running", input: run.input, cancelRequested: true, steps }, false), by);
    return "cancelled";
  }
  // Renamed steps keep their history under the new id (templates in the new version read `steps.<new id>`).
  for (const [oldId, newId] of Object.entries(input.mapping)) {
    if (oldId === newId || !steps.some((s) => s.nodeId === oldId)) continue;
    await stepsRenameNode(tx, orgId, runId, oldId, newId);
    await runEventsRenameChained(tx, orgId, runId, oldId, newId);
    await approvalsRenameNode(tx, orgId, runId, oldId, newId);
  }
  if (landing.action === "move") {
    // Nothing is in flight (checked above): every open step closes, a running one whose lease lapsed included, and a
    // settled step not yet walked from is marked walked, so no walk goes on from the old position. Closed before the
    // run changes version: the journey counts keep the closing on the old version, where the step was.
    const open = steps.filter((s) => ["ready", "waiting", "parked", "running"].includes(s.status)).map((s) => s.id);
    if (open.length) await stepsCancelOpen(tx, open);
    const unwalked = steps.filter((s) => !s.advanced && (s.status === "done" || s.status === "failed")).map((s) => s.id);
    if (unwalked.length) await stepsMarkAdvanced(tx, unwalked);
    await approvalsCancelPendingForMigration(tx, orgId, runId);
  }
  await runsSetVersion(tx, runId, v.toId);
  await runsTouch(tx, runId); // a worker's plan made on the old graph no longer applies
  if (landing.action !== "move" && "to" in landing) await rescheduleChangedWait(tx, v, runId, landing.to, input.toVersion);
  if (landing.action === "move") {
    const moved: RunRow = { ...run, versionId: v.toId };
    const now = await stepsForRun(tx, orgId, runId);
    const command = planStepAt(v.toGraph, { id: runId, status: "running", input: run.input, cancelRequested: false, steps: now }, landing.to);
    if (!command) throw new HoldfastError("invalid_migration", `"${landing.to}" is not a step`);
    await applyPlan(tx, v.toGraph, moved, now, [command], by);
  }
  await event("run.migrated", { toStep: "to" in landing ? landing.to : null, action: landing.action });
  return "migrated";
}

/**
 * A run kept waiting on a `wait` whose rule (or zone) the new version changed: its timer is recomputed from the new
 * rule with the same anchor (when the wait began), so "wait 2 days" edited to "wait 1 day" applies to waiting runs.
 */
async function rescheduleChangedWait(tx: Tx, v: Versions, runId: string, nodeId: string, toVersion: number): Promise<void> {
  const node = v.toGraph.nodes.find((n) => n.id === nodeId);
  if (node?.kind !== "wait") return;
  const timers = await timersPending(tx, { runId }, 10);
  const stepId = await stepsWaitingAt(tx, runId, nodeId);
  const rows = stepId ? await timersUnfiredForStep(tx, stepId) : [];
  const t = timers.find((x) => rows.some((r) => r.id === x.id));
  if (!t) return;
  const zone = node.config.zone ?? t.zone;
  const next = instantFor({ rule: node.config.rule, zone, spreadSeconds: node.config.spreadSeconds, runId, anchorAt: t.anchorAt });
  if (next.dueAt.getTime() === new Date(t.dueAt).getTime() && canonicalJson(node.config.rule) === canonicalJson(t.rule)) return;
  await timersReschedule(tx, t, next.zone, next.dueAt, `migrated to version ${toVersion}: the wait changed`, next.rule);
}
