import { type Db, inTx } from "@holdfast/db";
import { HoldfastError, InvalidPayloadError, NotFoundError } from "../../base/errors";
import { goalMet, type GoalMetOutcome } from "../../people/goals/goal-met";
import { automationsGoalTarget } from "../../store/sql/automations";
import { triggerOf } from "../../versions/graph";
import { GraphCache } from "../../versions/graph-cache";
import { contactOf } from "../start/contact-of";
import { triggerPayload } from "../start/payload";
import { SignatureError, type SignedHeaders } from "../start/signature";
import { authenticateTrigger } from "../start/trigger-auth";

/** A goal URL's delivery for an automation whose goal is not "a goal event" (409 at the edge). */
export class NotTheGoalError extends HoldfastError {
  constructor() {
    super("goal_not_event", "this automation's goal is not a goal event: choose \"A goal event arrives\" as its goal to use this URL");
  }
}

export interface GoalDelivery {
  /** The organisation the URL names (its slug already looked up). */
  orgId: string;
  automationSlug: string;
  rawBody: string;
  contentType: string | null;
  headers: SignedHeaders;
  /** The URL token, when the request came to /api/goals/{org}/{automation}/{token}. */
  urlToken: string | null;
}

export type GoalDeliveryOutcome =
  | { kind: "met"; runsEnding: number }
  | { kind: "duplicate" }
  | { kind: "no_contact"; email: string };

const goalGraphs = new GraphCache();

const form = "the automation's goal form";
/** The start trigger's refusals (by reason) as the goal URL's sender must read them: its path, its form, its secret. */
const goalRefusals: Record<string, string> = {
  "URL has no token (this trigger takes one)": `this goal URL includes its token (/api/goals/{org}/{automation}/{token}): copy it from ${form}`,
  "unknown or revoked URL token": `the token in this URL is not this automation's goal URL token (it may have been rotated): copy the goal URL from ${form}`,
  "URL token sent to a signed trigger": `this goal URL takes signed requests at /api/goals/{org}/{automation}, without a token: copy it from ${form}`,
  "trigger has no signing secret": 'this automation has no goal URL: choose "A goal event arrives" as its goal on the automation\'s page first',
  "signature headers missing": "this goal URL needs webhook-id, webhook-timestamp and webhook-signature headers, signed with the goal URL's own secret",
  "signature did not match": `no signature matches this goal URL's secret (the start trigger's secret is not it): copy the secret from ${form}`,
};

function inGoalWords(authenticate: () => void): void {
  try {
    authenticate();
  } catch (error) {
    const words = error instanceof SignatureError ? goalRefusals[error.reason] : undefined;
    throw words && error instanceof SignatureError ? new SignatureError(words, error.reason) : error;
  }
}

/**
 * A delivery to an automation's goal URL: authenticated as the start trigger is (its mode, with the goal URL's own
 * credentials), its payload names the contact by email where the published trigger says (contactOf), and it starts
 * no run: it marks the contact converted for the automation and ends its running runs (goalMet). A second delivery
 * with the same webhook-id changes nothing.
 */
export async function deliverGoal(db: Db, d: GoalDelivery): Promise<GoalDeliveryOutcome> {
  const { orgId } = d;
  return inTx(db, async (tx) => {
    const target = await automationsGoalTarget(tx, orgId, d.automationSlug);
    if (!target) throw new NotFoundError("automation_not_found", `automation "${d.automationSlug}"`);
    const credentials = { mode: target.triggerAuth, signingSecrets: target.signingSecrets, urlTokens: target.urlTokens };
    inGoalWords(() => authenticateTrigger(credentials, { kind: "http", urlToken: d.urlToken }, { rawBody: d.rawBody, headers: d.headers }, target.now));
    if (target.goal !== "event") throw new NotTheGoalError();
    const body = triggerPayload(d.contentType, d.rawBody);
    const trigger = target.versionId ? triggerOf(await goalGraphs.get(tx, orgId, target.versionId)).config : { contactEmailField: "email", fields: [] };
    const contact = contactOf(trigger, body);
    if (!contact) throw new InvalidPayloadError("the payload names no contact: it needs the contact's email address where the trigger's payload has it");
    const met: GoalMetOutcome = await goalMet(tx, {
      orgId,
      automationId: target.automationId,
      email: contact.email,
      goal: "event",
      webhookId: d.headers["webhook-id"],
      by: "goal URL",
    });
    if (met.kind === "duplicate") return { kind: "duplicate" };
    if (met.kind === "met") return { kind: "met", runsEnding: met.runIds.length };
    return { kind: "no_contact", email: contact.email };
  });
}
