import type { Tx } from "@holdfast/db";
import { applyFirstWalk } from "../engine/advance";
import { automationsLockLifecycle, automationsSetSampleIfNone } from "../../store/sql/automations";
import { contactsIdByEmail } from "../../store/sql/contacts";
import { runEventsInsert } from "../../store/sql/run-events";
import { contactsResolve, runsInsertIfNew, runsInsertWithinWindow, runsMarkHeld, runsMarkRerunOf, runsMarkTest, runsRecordDuplicate } from "../../store/sql/runs";
import { testRunsInsert } from "../../store/sql/test-runs";
import { triggerDeliveriesInsert } from "../../store/sql/trigger-deliveries";
import { changeContactZone } from "../timers/contact-zone";
import type { StartPlan, StartRequest } from "./start-plan";

/**
 * The start in the engine's transaction: the run row (or the one an earlier delivery started), its timeline row, a
 * test run's or a rerun's marks, the hold, the first walk as `admit` made it (applied by the engine's applier, which
 * reads the database clock for a timer), the contact's zone move, and the delivery row and sample.
 */
export async function startInTx(tx: Tx, plan: StartPlan): Promise<{ runId: string; inserted: boolean }> {
  const { request, run, contact, delivery } = plan;
  // A test run writes no contact (no new one, no zone moved): a stored contact its sample names is linked read only;
  // otherwise the sample's address and zone stand in for its templates and waits (test_runs.contact).
  const contactId = contact && !request.test ? await contactsResolve(tx, run.orgId, contact.email, null, contact.attributes) : null;
  const inserted =
    plan.windowHours === undefined
      ? { ...(await runsInsertIfNew(tx, { ...run, contactId, test: request.test !== undefined })), startKey: run.startKey }
      : await runsInsertWithinWindow(tx, { ...run, contactId, test: request.test !== undefined }, run.startKey, plan.windowHours);
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
 * other runs (run/timers/contact-zone.ts, the rule Settings and the CLI use), in the start's transaction. Only a delivery
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
