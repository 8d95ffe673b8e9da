import { randomUUID } from "node:crypto";
import { type Db, inTx, sqlOf, type Tx } from "@holdfast/db";
import type { WakePublisher } from "@holdfast/queue";
import { crashpoint } from "../crash";
import { changeContactZone } from "../timers/contact-zone";
import { InvalidPayloadError, NoPublishedVersionError, NotFoundError, pgErrorCode } from "../errors";
import { hasUnstorableText } from "../json";
import { deliveryGate } from "../automations/lifecycle";
import {
  automationsFindStartTarget,
  automationsLockLifecycle,
  automationsSetSampleIfNone,
  type StartTarget,
  type StartTargetGuard,
} from "../sql/automations";
import { contactsIdByEmail } from "../sql/contacts";
import { rowsAtStart } from "../apply/inline";
import { movesOn, planAtStart, type Command } from "../walk/plan";
import { newRunId } from "../apply/rows";
import { applyFirstWalk } from "../engine/advance";
import { runEventsInsert } from "../sql/run-events";
import { contactsResolve, runsInsertIfNew, runsInsertWithinWindow, runsMarkHeld, runsMarkRerunOf, runsMarkTest, runsRecordDuplicate, runsStartWithPlan } from "../sql/runs";
import type { PlanRows } from "../sql/plan-rows";
import { testRunsInsert } from "../sql/test-runs";
import { triggerDeliveriesInsert, triggerDeliveriesStartRun } from "../sql/trigger-deliveries";
import { type Graph, triggerOf } from "../versions/graph";
import { type DeliveryFacts, deliveryStatus, pruneDue } from "./deliveries";
import { triggerPayload } from "./payload";
import { contactOf } from "./contact-of";
import { planStartKey } from "./start-key";
import { GraphCache } from "../versions/graph-cache";
import { type SignedHeaders, signatureToleranceSeconds } from "./signature";
import { StartTargetCache } from "./target-cache";
import { authenticateTrigger, type StartAuth } from "./trigger-auth";

export interface StartRequest {
  orgSlug: string;
  automationSlug: string;
  /** The body exactly as received: signatures are over these bytes. */
  rawBody: string;
  /**
   * The parsed body, or `UnparsedBody` (a request to the trigger URL): then rawBody is parsed only once the request
   * has passed its credential check, so a sender without the credential costs no parsing whatever its body's shape.
   */
  body: unknown;
  headers: SignedHeaders;
  /** Where the start came from, for the timeline ("webhook", "cli"). */
  via: string;
  /** Who is starting it: an operator (CLI, tests), or an HTTP request that must carry the trigger's credential. */
  auth: StartAuth;
  /**
   * A request to the trigger URL: its delivery row (accepted or duplicate, linked to the run) commits with the
   * start, and the first accepted one's input becomes the automation's sample when it has none.
   */
  delivery?: DeliveryFacts;
  /**
   * The editor's Test run: a fresh start key (never a duplicate), the run marked test, `by` on its timeline. Its
   * effects are simulated with `script` (test-runs/script.ts); "Send to me" sends its emails to `sendTo` only. It
   * never writes a contact: a stored one its sample names is linked read only, else the sample's stands in. Its clock
   * starts now, or at `clockStartsAt` (later than now: to try a journey across a daylight-saving change, say).
   */
  test?: { by: string; /** A parsed test-runs/script.ts TestScript ({} by default). */ script?: unknown; sendTo?: string | null; clockStartsAt?: Date | null };
  /**
   * "Run again with the same input" (runs/retry-run.ts): the new run links to `of`; its start key is fresh per
   * request (`requestKey`), so a repeated click finds the run the first one started.
   */
  rerun?: { of: string; by: string; requestKey: string };
}

/** A trigger request's body not parsed yet: startRun parses it (triggerPayload) after the credential check. */
export class UnparsedBody {
  constructor(readonly contentType: string | null) {}
}

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

/** What a start knows once its request is admitted: the run to insert, its first walk, and how to record it. */
interface StartPlan {
  request: StartRequest;
  target: StartTarget;
  graph: Graph;
  body: unknown;
  version: number;
  /** The automation is paused with "hold": the run is accepted and held (re-checked under a lock in the transaction). */
  hold: boolean;
  run: { orgId: string; automationId: string; versionId: string; startKey: string; input: unknown };
  /** An identical-submission key's window: which generation is the run is the database's to decide (in a transaction). */
  windowHours: number | undefined;
  contact: ReturnType<typeof contactOf>;
  eventData: Record<string, unknown>;
  /** The run's first walk (walk/plan.ts planAtStart), made once, whichever way the start is written. */
  walked: Command[];
  delivery: {
    status: typeof deliveryStatus;
    webhookId: string | null;
    contentType: string | null;
    bodyBytes: number;
    sampleIfNone: boolean;
    prune: boolean;
  } | null;
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

/**
 * The start in the engine's transaction: the run row (or the one an earlier delivery started), its timeline row, a
 * test run's or a rerun's marks, the hold, the first walk as `admit` made it (applied by the engine's applier, which
 * reads the database clock for a timer), the contact's zone move, and the delivery row and sample.
 */
async function startInTx(tx: Tx, plan: StartPlan): Promise<{ runId: string; inserted: boolean }> {
  const { request, run, contact, delivery } = plan;
  // A test run writes no contact (no new one, no zone moved): a stored contact its sample names is linked read only;
  // otherwise the sample's address and zone stand in for its templates and waits (test_runs.contact).
  const contactId = contact && !request.test ? await contactsResolve(tx, run.orgId, contact.email, null, contact.attributes) : null;
  const inserted =
    plan.windowHours === undefined
      ? { ...(await runsInsertIfNew(tx, { ...run, contactId })), startKey: run.startKey }
      : await runsInsertWithinWindow(tx, { ...run, contactId }, run.startKey, plan.windowHours);
  const data = { ...plan.eventData, startKey: inserted.startKey };
  if (!inserted.inserted) await runsRecordDuplicate(tx, run.orgId, inserted.id, data);
  else {
    await runEventsInsert(tx, [{ orgId: run.orgId, runId: inserted.id, type: "run.started", data }]);
    // Marked before its first walk: a test run's first wait counts in the sample's contact's zone, its approval asks nobody.
    if (request.test) await markTest(tx, plan, inserted.id);
    else await moveContact(tx, plan, inserted.id, contactId);
    if (request.rerun) await markRerun(tx, plan, inserted.id);
    const held = await holdIfPaused(tx, plan, inserted.id);
    const runRow = { ...run, id: inserted.id, status: "running" as const, cancelRequested: false, held, ...(request.test ? { test: true } : {}) };
    await applyFirstWalk(tx, plan.graph, runRow, plan.walked, "start");
  }
  if (delivery) {
    const row = {
      outcome: inserted.inserted ? ("accepted" as const) : ("duplicate" as const),
      status: inserted.inserted ? delivery.status.accepted : delivery.status.duplicate,
      reason: null,
      startKey: inserted.startKey,
      webhookId: delivery.webhookId,
      runId: inserted.id,
      contentType: delivery.contentType,
      bodyBytes: delivery.bodyBytes,
    };
    await triggerDeliveriesInsert(tx, run.orgId, run.automationId, row, delivery.prune);
    if (inserted.inserted && delivery.sampleIfNone) await automationsSetSampleIfNone(tx, run.orgId, run.automationId, plan.body);
  }
  return { runId: inserted.id, inserted: inserted.inserted };
}

/**
 * A payload that names a zone for its contact moves the contact there, and with it the pending waits of the contact's
 * other runs (timers/contact-zone.ts, the rule Settings and the CLI use), in the start's transaction. Only a delivery
 * that starts a run does: a re-sent one would undo a person's later change.
 */
async function moveContact(tx: Tx, plan: StartPlan, runId: string, contactId: string | null): Promise<void> {
  const { contact, request, run } = plan;
  if (!contact?.timeZone) return;
  const id = contactId ?? (await contactsIdByEmail(tx, run.orgId, contact.email));
  const by = `${request.delivery ? "a delivery to" : `a ${request.via} start of`} "${request.automationSlug}", run ${runId}`;
  if (id) await changeContactZone(tx, run.orgId, id, contact.timeZone, by);
}

/** The editor's Test run: the run marked test, with its script, its "Send to me" address and its clock. */
async function markTest(tx: Tx, plan: StartPlan, runId: string): Promise<void> {
  const { contact, run } = plan;
  const test = plan.request.test as NonNullable<StartRequest["test"]>;
  const storedContact = contact ? await contactsIdByEmail(tx, run.orgId, contact.email) : null;
  await runsMarkTest(tx, run.orgId, runId, storedContact ?? null);
  await testRunsInsert(tx, {
    orgId: run.orgId,
    runId,
    startedBy: test.by,
    script: test.script ?? {},
    sendTo: test.sendTo ?? null,
    contact: contact && !storedContact ? contact : null,
    clockStartsAt: test.clockStartsAt ?? null,
  });
}

/** "Run again with the same input": the new run links to the old one, whose timeline says so. */
async function markRerun(tx: Tx, plan: StartPlan, runId: string): Promise<void> {
  const rerun = plan.request.rerun as NonNullable<StartRequest["rerun"]>;
  await runsMarkRerunOf(tx, plan.run.orgId, runId, rerun.of);
  await runEventsInsert(tx, [{ orgId: plan.run.orgId, runId: rerun.of, type: "run.rerun", worker: rerun.by, data: { newRunId: runId, version: plan.version } }]);
}

/**
 * A start held by its paused automation re-reads the automation under a share lock: a Resume that committed since the
 * admission must not leave this run held with nobody left to release it. true: the run is held.
 */
async function holdIfPaused(tx: Tx, plan: StartPlan, runId: string): Promise<boolean> {
  const { run } = plan;
  if (!plan.hold || (await automationsLockLifecycle(tx, run.orgId, run.automationId, "share"))?.pauseMode !== "hold") return false;
  await runsMarkHeld(tx, run.orgId, runId);
  await runEventsInsert(tx, [
    { orgId: run.orgId, runId, type: "run.held", worker: "start", data: { reason: "the automation is paused: accepted and held until it is resumed" } },
  ]);
  return true;
}
