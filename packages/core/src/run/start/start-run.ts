import { randomUUID } from "node:crypto";
import { type Db, inTx, sqlOf } from "@holdfast/db";
import type { WakePublisher } from "@holdfast/queue";
import { crashpoint } from "../../base/crash";
import { InvalidPayloadError, NoPublishedVersionError, NotFoundError, pgErrorCode } from "../../base/errors";
import { hasUnstorableText } from "../../base/json";
import { deliveryGate } from "../automations/lifecycle";
import { automationsFindStartTarget, type StartTarget, type StartTargetGuard } from "../../store/sql/automations";
import { rowsAtStart } from "../apply/inline";
import { movesOn, planAtStart } from "../../decide/walk/plan";
import { newRunId } from "../apply/rows";
import { runsStartWithPlan } from "../../store/sql/runs";
import type { PlanRows } from "../../store/sql/plan-rows";
import { triggerDeliveriesStartRun } from "../../store/sql/trigger-deliveries";
import { type Graph, triggerOf } from "../../versions/graph";
import { deliveryStatus, pruneDue } from "./deliveries";
import { triggerPayload } from "./payload";
import { contactOf } from "./contact-of";
import { planStartKey } from "./start-key";
import { GraphCache } from "../../versions/graph-cache";
import { signatureToleranceSeconds } from "./signature";
import { StartTargetCache } from "./target-cache";
import { authenticateTrigger } from "./trigger-auth";
import { startInTx } from "./start-in-tx";
import { type StartPlan, type StartRequest, UnparsedBody } from "./start-plan";

export { type StartRequest, UnparsedBody };

/** The request's body, parsed once per request (a kept target that falls back to a fresh read does not parse twice). */
const parsedBodies = new WeakMap<StartRequest, { body: unknown } | { error: unknown }>();
function bodyOf(request: StartRequest): unknown {
  if (!(request.body instanceof UnparsedBody)) return request.body;
  let parsed = parsedBodies.get(request);
  if (!parsed) {
    try {
      parsed = { body: triggerPayload(request.body.contentType, request.rawBody) };
    } catch (error) {
      parsed = { error };
    }
    parsedBodies.set(request, parsed);
  }
  if ("error" in parsed) throw parsed.error;
  return parsed.body;
}

/** holdfast_contact_resolve: the payload moves an existing contact to another zone (its waits move in TypeScript). */
const contactZoneChanges = "HF004";

/** Published versions are immutable, so a process parses each one once. */
const startGraphs = new GraphCache();

/** The start targets of the trigger URLs this process started runs of lately, each checked by the start's statement. */
const startTargets = new StartTargetCache();

export interface StartOptions {
  /**
   * Announces the run's first steps to their lanes' workers on Redis after the commit, in place of the outbox
   * trigger's NOTIFY (queue/wake.ts: a notifying commit holds a cluster-wide lock through its flush). Used while it is
   * connected, on the one-statement path; otherwise, and without it, the trigger NOTIFYs as before. Either way a
   * wake-up lost is the relay's to deliver after its grace.
   */
  wake?: Pick<WakePublisher, "connected" | "ready">;
  /**
   * false: read the start target with every start, as before target-cache.ts (the bench's side-by-side row). By
   * default a target is kept and checked by the start's statement.
   */
  keepTarget?: boolean;
}

/** The lanes of the due first steps a walk's rows hand to workers. */
function readyLanes(outbox: readonly { topic: string; payload: Record<string, unknown>; delayMs?: number }[]): string[] {
  return [...new Set(outbox.flatMap((r) => (r.topic === "step.ready" && !r.delayMs && typeof r.payload.lane === "string" ? [r.payload.lane] : [])))];
}

export interface StartOutcome {
  runId: string;
  duplicate: boolean;
  version: number;
}

/**
 * Starts one logical run per event. The run row, its timeline event and its first walk (first steps with their
 * step.ready outbox rows, or its timer) commit together; a repeated delivery finds the same run and writes only a
 * timeline note. The common case is one statement (holdfast_run_start, with the delivery row when the request came
 * to the trigger URL): the trigger URL's start target is kept from an earlier start (target-cache.ts) and checked by
 * that statement, or read first when it is not kept or no longer current. A first walk that needs the engine's
 * transaction (a timer computed from the database clock) and a test run take the transactional path.
 */
export async function startRun(db: Db, request: StartRequest, options: StartOptions = {}): Promise<StartOutcome> {
  // The common start is one or two named statements on the client's pool (sqlOf): the read, when the target is not
  // kept, and holdfast_run_start.
  const sql = sqlOf(db);
  // Whether this delivery prunes the log is decided once a request, so a kept start that falls back to a fresh read
  // does not count the delivery twice (and skip the prune it was due).
  let pruneDecided: boolean | undefined;
  const prune = (orgId: string) => (pruneDecided ??= pruneDue(orgId, request.automationSlug));
  const keeps = options.keepTarget !== false && !request.test && !request.rerun;
  const kept = keeps ? startTargets.get(request.orgSlug, request.automationSlug) : undefined;
  if (kept) {
    // Anything the kept target leads to before its statement is sent (a refusal, a missing start key) is decided
    // again on a fresh read: a request is answered only by what the database says now.
    const attempt = { sent: false };
    const started = await startFrom(db, sql, request, options, kept, attempt, prune).catch((error: unknown) => {
      if (attempt.sent) throw error;
      return null;
    });
    if (started) return started.outcome;
    startTargets.drop(request.orgSlug, request.automationSlug); // stale, or not a one-statement start: read again
  }
  const readAt = performance.now();
  const found = await automationsFindStartTarget(sql, request.orgSlug, request.automationSlug);
  if (!found.org) throw new NotFoundError("org_not_found", `organisation "${request.orgSlug}"`);
  if (!found.target) throw new NotFoundError("automation_not_found", `automation "${request.automationSlug}"`);
  const started = await startFrom(db, sql, request, options, found.target, null, prune);
  if (!started) throw new Error(`start of "${request.automationSlug}" found its fresh target stale`);
  if (keeps && started.oneStatement) startTargets.keep(request.orgSlug, request.automationSlug, found.target, readAt);
  return started.outcome;
}

/**
 * A start against `target`, one path whatever the start: the request is admitted (credentials, body, version,
 * lifecycle), the first walk is made once, and the start is written either as one statement (holdfast_run_start, with
 * the delivery row; only where the walk's rows fit it and nothing needs a transaction) or in the engine's transaction
 * (a first walk that waits on the database clock, a held start, a windowed key, a test run, a rerun, a contact that
 * moves zone). A kept target (`attempt`: its statement's sending is marked there) is used only by the one statement,
 * which checks it: this answers null, having written nothing, when that statement finds it stale or the start needs
 * the transaction; the caller reads again then, and after anything this throws before the statement.
 */
async function startFrom(
  db: Db,
  sql: ReturnType<typeof sqlOf>,
  request: StartRequest,
  options: StartOptions,
  target: StartTarget,
  attempt: { sent: boolean } | null,
  prune: (orgId: string) => boolean,
): Promise<{ outcome: StartOutcome; oneStatement: boolean } | null> {
  const plan = await admit(db, request, target, prune);
  const runId = newRunId();
  const started = { orgId: target.orgId, runId, type: "run.started", data: plan.eventData };
  const statementFits = !plan.hold && !request.test && !request.rerun && plan.windowHours === undefined && movesOn(plan.walked);
  const rows = statementFits ? rowsAtStart(plan.walked, { orgId: target.orgId, runId }, started) : null;
  if (attempt && !rows) return null; // only the one statement checks a kept target

  let result: { runId: string; inserted: boolean } | null = null;
  let announce: (() => void) | undefined;
  if (rows) {
    const written = await startInOneStatement(sql, plan, runId, rows, options, attempt);
    if (written === "stale") return null;
    if (written === "contact_moves") {
      // The contact moves to another zone: nothing of the statement committed; the transaction moves its waits too
      // (and its trigger NOTIFYs). A kept target is not checked there: read again first.
      if (attempt) return null;
    } else {
      result = written.started;
      announce = written.announce;
    }
  }
  result ??= await inTx(db, (tx) => startInTx(tx, plan));
  // Committed. A start that sent no NOTIFY announces its first steps now; a death before (here) leaves them to the
  // relay's poll after its grace.
  crashpoint("start.after_commit");
  announce?.();
  return { outcome: { runId: result.runId, duplicate: !result.inserted, version: plan.version }, oneStatement: rows !== null };
}

/**
 * Admits a request against its target, before anything is written: credentials first (nothing else about the
 * automation is revealed before them), then the body, the published version and the lifecycle; then the run's start
 * key, contact and first walk. A refusal thrown here on a kept target is decided again on a fresh read.
 */
async function admit(db: Db, request: StartRequest, target: StartTarget, prune: (orgId: string) => boolean): Promise<StartPlan> {
  const credentials = { mode: target.triggerAuth, signingSecrets: target.signingSecrets, urlTokens: target.urlTokens };
  authenticateTrigger(credentials, request.auth, request, target.now);
  const body = bodyOf(request);
  if (hasUnstorableText(body)) throw new InvalidPayloadError("the body contains U+0000 or an unpaired surrogate, which cannot be stored");
  const { versionId, version } = target;
  if (!versionId || version === null) throw new NoPublishedVersionError(request.automationSlug);
  // Paused or archived (lifecycle.ts): refused here, after the credential check, before anything is written.
  const gate = deliveryGate(target.gate, request.automationSlug, request.test !== undefined);
  if (gate.kind === "refuse") throw gate.error;
  // (A kept target's version may be gone with its automation: the caller reads again, and the fresh answer says so.)
  const graph = await startGraphs.get(db, target.orgId, versionId);
  const key = startKeyOf(request, target, graph, body);
  const contact = contactOf(triggerOf(graph).config, body);
  const eventData = {
    startKey: key.key,
    via: request.via,
    version,
    ...(contact ? { contact: contact.email } : {}),
    ...(request.test ? { test: true, by: request.test.by } : {}),
    ...(request.rerun ? { rerunOf: request.rerun.of, by: request.rerun.by } : {}),
  };
  return {
    request,
    target,
    graph,
    body,
    version,
    hold: gate.kind === "hold",
    run: { orgId: target.orgId, automationId: target.automationId, versionId, startKey: key.key, input: body },
    windowHours: key.windowHours,
    contact,
    eventData,
    walked: planAtStart(graph, body),
    delivery: request.delivery
      ? {
          status: deliveryStatus,
          webhookId: request.headers["webhook-id"]?.slice(0, 300) ?? null,
          contentType: request.delivery.contentType,
          bodyBytes: request.delivery.bodyBytes ?? 0,
          sampleIfNone: target.needsSample,
          prune: prune(target.orgId),
        }
      : null,
  };
}

/** The run's start key: fresh for a test run and for each rerun request, else from the trigger's rule (start-key.ts). */
function startKeyOf(request: StartRequest, target: StartTarget, graph: Graph, body: unknown): { key: string; windowHours?: number } {
  if (request.test) return { key: `${target.automationId}:test:${randomUUID()}` };
  if (request.rerun) return { key: `${target.automationId}:rerun:${request.rerun.of}:${request.rerun.requestKey}` };
  return planStartKey(target.automationId, triggerOf(graph).config, { webhookId: request.headers["webhook-id"], body }, target.triggerAuth);
}

/**
 * The one-statement start: holdfast_run_start with the walk's rows (and the delivery row), checked against a kept
 * target by its guard. "stale": the kept target no longer holds (nothing written); "contact_moves": the payload
 * moves its contact to another zone, which only the transaction carries (nothing committed).
 */
async function startInOneStatement(
  sql: ReturnType<typeof sqlOf>,
  plan: StartPlan,
  runId: string,
  rows: PlanRows,
  options: StartOptions,
  attempt: { sent: boolean } | null,
): Promise<{ started: { runId: string; inserted: boolean }; announce?: () => void } | "stale" | "contact_moves"> {
  const { request, target, run, contact, eventData, delivery } = plan;
  // What the statement checks of a kept target: its fingerprint, and a signed request's timestamp by the database clock.
  const guard: StartTargetGuard | undefined = attempt
    ? {
        orgSlug: request.orgSlug,
        automationSlug: request.automationSlug,
        fingerprint: target.fingerprint,
        signedAt: request.auth.kind === "http" && target.triggerAuth === "signed" ? Number(request.headers["webhook-timestamp"]) : null,
        toleranceSeconds: signatureToleranceSeconds,
      }
    : undefined;
  const lanes = readyLanes(rows.outbox);
  const wake = options.wake && lanes.length > 0 && options.wake.connected ? options.wake : undefined;
  const start = { ...run, id: runId, eventData, rows, contact, readyWake: wake ? ("bus" as const) : ("notify" as const) };
  if (attempt) attempt.sent = true;
  try {
    const started = delivery ? await triggerDeliveriesStartRun(sql, start, delivery, guard) : await runsStartWithPlan(sql, start, guard);
    if (!started) return "stale"; // only a guarded statement answers nothing
    return { started, ...(wake && started.inserted ? { announce: () => wake.ready(lanes) } : {}) };
  } catch (error) {
    if (pgErrorCode(error) !== contactZoneChanges) throw error;
    return "contact_moves";
  }
}

