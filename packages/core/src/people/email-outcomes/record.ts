import { type Db, inTx } from "@holdfast/db";
import { emailMessagesRecordOutcome, emailMessagesRunOf } from "../../store/sql/email-messages";
import { runMeetsGoal } from "../goals/run-goal";
import type { ClickClaims, OpenClaims } from "./tokens";

/**
 * A click through a tracked link, by a token already verified: the message's first click is recorded once however
 * many arrive at once (holdfast_email_outcome locks its row), every click adds to its count. The answer is where to
 * send the person: exactly the signed target. The message's first click may be its automation's goal: the contact's
 * runs of it end converted, in the click's commit (runMeetsGoal).
 */
export async function recordClick(db: Db, c: ClickClaims): Promise<{ target: string; recorded: "first" | "again" | "unknown" }> {
  const recorded = await inTx(db, async (tx) => {
    const outcome = await emailMessagesRecordOutcome(tx, c.o, c.k, "clicked");
    const runId = outcome === "first" ? await emailMessagesRunOf(tx, c.o, c.k) : null;
    if (runId) await runMeetsGoal(tx, c.o, runId, "clicked");
    return outcome;
  });
  return { target: c.u, recorded };
}

/** The open pixel was fetched (a person, or a mail client that preloads images). */
export function recordOpen(db: Db, c: OpenClaims): Promise<"first" | "again" | "unknown"> {
  return inTx(db, (tx) => emailMessagesRecordOutcome(tx, c.o, c.k, "opened"));
}
