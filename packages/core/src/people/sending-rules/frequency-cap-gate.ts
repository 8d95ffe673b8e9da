import { type Db, inTx } from "@holdfast/db";
import type { StepOutcome } from "../../base/outcome/outcome";
import { automationsCapOfRun } from "../../store/sql/automations-cap";
import { contactSendsCount, contactSendsLockAddress, contactSendsRelease, contactSendsWindow } from "../../store/sql/contact-sends";
import { capVerdict, cappedOutcome, frequencyCapOf } from "./frequency-cap";

export interface CapSend {
  orgId: string;
  runId: string;
  stepId: string;
  effectKey: string;
  /** The one bare address the email goes to (send_email checked it). */
  to: string;
  /** A test run sends nothing, so it is neither counted nor capped. */
  test: boolean;
}

/**
 * The frequency cap at send time, right before the send begins: null means go ahead (no cap, a transactional
 * automation, a test run, a retry of a counted send, or a place under the cap, now counted); otherwise the capped
 * outcome (wait or skip, per the automation). Lock, count and insert are one transaction, so two sends to one address
 * at the same instant queue on the lock and the second sees the first's row.
 */
export async function frequencyCapGate(db: Db, send: CapSend): Promise<StepOutcome | null> {
  if (send.test) return null;
  const settings = await automationsCapOfRun(db, send.orgId, send.runId);
  const cap = frequencyCapOf(settings?.frequencyCap);
  if (!settings || !cap || settings.transactional) return null;
  return inTx(db, async (tx) => {
    await contactSendsLockAddress(tx, send.orgId, send.to);
    const window = await contactSendsWindow(tx, { orgId: send.orgId, address: send.to, effectKey: send.effectKey, cap: cap.count, periodHours: cap.periodHours });
    const verdict = capVerdict(cap, window);
    if (verdict === "retry") return null;
    if (verdict === "count") {
      const row = { orgId: send.orgId, address: send.to, effectKey: send.effectKey, automationId: settings.automationId, runId: send.runId, stepId: send.stepId };
      await contactSendsCount(tx, { ...row, at: window.now });
      return null;
    }
    if (!window.freeing || !window.allowedAt) throw new Error(`frequency cap: no counted send frees a place for ${send.effectKey}`);
    return cappedOutcome(settings.cappedAction, send.to, { cap, count: window.count, freeing: window.freeing, allowedAt: window.allowedAt, now: window.now });
  });
}

/** After the send: one that definitely did not go out (refused before DATA) gives its place back. */
export async function frequencyCapAfterSend(db: Db, send: Pick<CapSend, "orgId" | "effectKey" | "test">, sent: StepOutcome): Promise<void> {
  if (send.test || sent.kind !== "fail" || !sent.error.notPerformed) return;
  await contactSendsRelease(db, send.orgId, send.effectKey);
}
