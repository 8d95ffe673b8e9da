import { randomUUID } from "node:crypto";
import { type Db, inTx, prismaSql, sqlOf, type Tx } from "@holdfast/db";
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
import { newRunId } from "../apply/rows";
import { walkStarted } from "../engine/advance";
import { runEventsInsert } from "../sql/run-events";
import { contactsResolve, runsInsertIfNew, runsInsertWithinWindow, runsMarkHeld, runsMarkRerunOf, runsMarkTest, runsRecordDuplicate, runsStartWithPlan } from "../sql/runs";
import { testRunsInsert } from "../sql/test-runs";
import { triggerDeliveriesInsert, triggerDeliveriesStartRun } from "../sql/trigger-deliveries";
import { triggerOf } from "../versions/graph";
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

/**
 * A start against `target`. A kept one (`kept`: its statement's sending is marked there) is used only where one
 * statement checks it: this answers null, having written nothing, when that statement finds it stale or when the
 * start needs another path; the caller reads again then, and after anything this throws before the statement.
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
  const kept = attempt !== null;
  // Credentials before anything else about the automation is revealed or written.
  const credentials = { mode: target.triggerAuth, signingSecrets: target.signingSecrets, urlTokens: target.urlTokens };
  authenticateTrigger(credentials, request.auth, request, target.now);
  // Only now is the body parsed and checked (a refusal here is decided again on a fresh read, as any other).
  const body = bodyOf(request);
  if (hasUnstorableText(body)) throw new InvalidPayloadError("the body contains U+0000 or an unpaired surrogate, which cannot be stored");
  const { versionId, version } = target;
  if (!versionId || version === null) throw new NoPublishedVersionError(request.automationSlug);
  // Paused or archived (lifecycle.ts): refused here, after the credential check, before anything is written.
  const gate = deliveryGate(target.gate, request.automationSlug, request.test !== undefined);
  if (gate.kind === "refuse") throw gate.error;
  const hold = gate.kind === "hold";
  // What the statement checks of a kept target: its fingerprint, and a signed request's timestamp by the database clock.
  const sentAt = request.auth.kind === "http" && target.triggerAuth === "signed" ? Number(request.headers["webhook-timestamp"]) : null;
  const guard: StartTargetGuard | undefined = kept
    ? {
        orgSlug: request.orgSlug,
        automationSlug: request.automationSlug,
        fingerprint: target.fingerprint,
        signedAt: sentAt,
        toleranceSeconds: signatureToleranceSeconds,
      }
    : undefined;

  // (A kept target's version may be gone with its automation: the caller reads again, and the fresh answer says so.)
  const graph = await startGraphs.get(db, target.orgId, versionId);
  const plan = request.test
    ? { key: `${target.automationId}:test:${randomUUID()}` }
    : request.rerun
      ? { key: `${target.automationId}:rerun:${request.rerun.of}:${request.rerun.requestKey}` }
      : planStartKey(target.automationId, triggerOf(graph).config, { webhookId: request.headers["webhook-id"], body }, target.triggerAuth);
  const startKey = plan.key;
  // An identical-submission key with a window: which generation is the run is the database's to decide, in the
  // engine's transaction (runsInsertWithinWindow).
  const windowHours = plan.windowHours;
  const contact = contactOf(triggerOf(graph).config, body);
  const eventData = {
    startKey,
    via: request.via,
    version,
    ...(contact ? { contact: contact.email } : {}),
    ...(request.test ? { test: true, by: request.test.by } : {}),
    ...(request.rerun ? { rerunOf: request.rerun.of, by: request.rerun.by } : {}),
  };
  const run = { orgId: target.orgId, automationId: target.automationId, versionId, startKey, input: body };
  // The first walk as the rows one statement inserts with the run (apply/), or null when it needs the transaction.
  const runId = newRunId();
  const rows = rowsAtStart(graph, { orgId: run.orgId, runId, input: body }, { orgId: run.orgId, runId, type: "run.started", data: eventData });
  const delivery = request.delivery
    ? {
        status: deliveryStatus,
        webhookId: request.headers["webhook-id"]?.slice(0, 300) ?? null,
        contentType: request.delivery.contentType,
        bodyBytes: request.delivery.bodyBytes ?? 0,
        sampleIfNone: target.needsSample,
        prune: prune(target.orgId),
      }
    : null;

  // A payload that names a zone for its contact moves the contact there, and with it the pending waits of the
  // contact's other runs (timers/contact-zone.ts, the rule Settings and the CLI use), in the start's transaction. Only a
  // delivery that starts a run does: a re-sent one would undo a person's later change.
  const moveContact = async (tx: Tx, runId: string, contactId: string | null) => {
    if (!contact?.timeZone) return;
    const id = contactId ?? (await contactsIdByEmail(tx, run.orgId, contact.email));
    const by = `${request.delivery ? "a delivery to" : `a ${request.via} start of`} "${request.automationSlug}", run ${runId}`;
    if (id) await changeContactZone(tx, run.orgId, id, contact.timeZone, by);
  };

  // The engine's transaction: a first walk that needs it (a timer from the database clock), a payload that moves its
  // contact to another zone, and test runs (marked before they commit). The delivery row and the sample commit with
  // the run.
  const startInTx = async (tx: Tx, as: { test?: (runId: string) => Promise<void> } = {}) => {
    const contactId = contact && !as.test ? await contactsResolve(tx, run.orgId, contact.email, null, contact.attributes) : null;
    const inserted =
      windowHours === undefined
        ? { ...(await runsInsertIfNew(tx, { ...run, contactId })), startKey }
        : await runsInsertWithinWindow(tx, { ...run, contactId }, startKey, windowHours);
    const data = { ...eventData, startKey: inserted.startKey };
    if (inserted.inserted) await runEventsInsert(tx, [{ orgId: run.orgId, runId: inserted.id, type: "run.started", data }]);
    else await runsRecordDuplicate(tx, run.orgId, inserted.id, data);
    if (inserted.inserted && !as.test) await moveContact(tx, inserted.id, contactId);
    if (inserted.inserted && as.test) await as.test(inserted.id);
    // A held start re-reads the automation under a share lock: a Resume that committed since the read above must
    // not leave this run held with nobody left to release it.
    const held = hold && inserted.inserted && (await automationsLockLifecycle(tx, run.orgId, run.automationId, "share"))?.pauseMode === "hold";
    if (held) {
      await runsMarkHeld(tx, run.orgId, inserted.id);
      await runEventsInsert(tx, [
        { orgId: run.orgId, runId: inserted.id, type: "run.held", worker: "start", data: { reason: "the automation is paused: accepted and held until it is resumed" } },
      ]);
    }
    if (inserted.inserted) {
      await walkStarted(tx, graph, { ...run, id: inserted.id, status: "running", cancelRequested: false, held, ...(as.test ? { test: true } : {}) }, "start");
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
      if (inserted.inserted && delivery.sampleIfNone) await automationsSetSampleIfNone(tx, run.orgId, run.automationId, body);
    }
    return { runId: inserted.id, inserted: inserted.inserted };
  };

  let started: { runId: string; inserted: boolean };
  let announce: (() => void) | undefined;
  const oneStatement = rows !== null && !hold && !request.test && !request.rerun && windowHours === undefined;
  if (kept && !oneStatement) return null; // only the one statement checks a kept target
  if (request.test) {
    const test = request.test;
    started = await inTx(db, async (tx) => {
      // A test run writes no contact (no new one, no zone moved): a stored contact its sample names is linked read
      // only; otherwise the sample's address and zone stand in for its templates and waits (test_runs.contact).
      const storedContact = contact ? await contactsIdByEmail(tx, run.orgId, contact.email) : null;
      const mark = async (testRunId: string) => {
        await runsMarkTest(tx, run.orgId, testRunId, storedContact ?? null);
        await testRunsInsert(tx, {
          orgId: run.orgId,
          runId: testRunId,
          startedBy: test.by,
          script: test.script ?? {},
          sendTo: test.sendTo ?? null,
          contact: contact && !storedContact ? contact : null,
          clockStartsAt: test.clockStartsAt ?? null,
        });
      };
      if (rows) {
        const s = await runsStartWithPlan(prismaSql(tx), { ...run, id: runId, eventData, rows, contact: null, readyWake: "notify" });
        if (!s) throw new Error(`test start of ${startKey} returned nothing`);
        await mark(s.runId);
        return s;
      }
      // Marked before its first walk: a first wait counts in the sample's contact's zone, an approval asks nobody.
      return startInTx(tx, { test: mark });
    });
  } else if (request.rerun) {
    const rerun = request.rerun;
    started = await inTx(db, async (tx) => {
      const s = await startInTx(tx);
      if (s.inserted) {
        await runsMarkRerunOf(tx, run.orgId, s.runId, rerun.of);
        await runEventsInsert(tx, [{ orgId: run.orgId, runId: rerun.of, type: "run.rerun", worker: rerun.by, data: { newRunId: s.runId, version } }]);
      }
      return s;
    });
  } else if (rows && oneStatement) {
    const lanes = readyLanes(rows.outbox);
    const wake = options.wake && lanes.length > 0 && options.wake.connected ? options.wake : undefined;
    const readyWake = wake ? "bus" : "notify";
    if (attempt) attempt.sent = true;
    try {
      const s = delivery
        ? await triggerDeliveriesStartRun(sql, { ...run, id: runId, eventData, rows, contact, readyWake }, delivery, guard)
        : await runsStartWithPlan(sql, { ...run, id: runId, eventData, rows, contact, readyWake }, guard);
      if (!s) return null; // the kept target is stale (only a guarded statement answers nothing)
      started = s;
      if (wake && started.inserted) announce = () => wake.ready(lanes);
    } catch (error) {
      // The contact moves to another zone: nothing of the statement committed; the transaction moves its waits too
      // (and its trigger NOTIFYs). A kept target is not checked there: read again first.
      if (pgErrorCode(error) !== contactZoneChanges) throw error;
      if (kept) return null;
      started = await inTx(db, startInTx);
    }
  } else {
    started = await inTx(db, startInTx);
  }
  // Committed. A start that sent no NOTIFY announces its first steps now; a death before (here) leaves them to the
  // relay's poll after its grace.
  crashpoint("start.after_commit");
  announce?.();
  return { outcome: { runId: started.runId, duplicate: !started.inserted, version }, oneStatement };
}
