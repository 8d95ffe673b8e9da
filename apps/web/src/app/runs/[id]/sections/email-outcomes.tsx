import type { StoryClock } from "@holdfast/core/story";
import type { EmailMessageView } from "@holdfast/core/store";
import type { StepEmailCounts } from "../../../../server/step-email-counts";
import { type EmailCounts, emailRates } from "../../../email-rates";
import { percent } from "../../../percent";

/** "80% delivered, 20% bounced": the step's outcomes that are shares of `base`. */
const ratesOf = (e: EmailCounts, base: "sent" | "delivered") =>
  emailRates(e)
    .filter((r) => r.base === base)
    .map((r) => `${percent(r.n, r.of)} ${r.key}`)
    .join(", ");

/**
 * What became of the email (issue 43), under "The email it sent": each outcome with the instant it first happened
 * (and how many times, for opens, clicks and replies), then the same step's rates over every email it sent (the
 * journey counts: all versions, all time).
 */
export function EmailOutcomes({ message, rates, clock }: { message: EmailMessageView; rates: StepEmailCounts | null; clock: StoryClock }) {
  const at = (d: Date | null) => (d ? clock.when(d) : "not yet");
  const times = (n: number) => (n > 1 ? ` (${n} times)` : "");
  return (
    <div className="email-outcomes" data-email-outcomes={message.stepId}>
      <h3>What became of it</h3>
      <dl className="facts">
        <dt>Delivered</dt>
        <dd data-outcome="delivered">{message.deliveredAt ? `${clock.when(message.deliveredAt)}: the mail server took it` : "not confirmed by the mail server"}</dd>
        <dt>Bounced</dt>
        <dd data-outcome="bounced">
          {message.bouncedAt
            ? `${clock.when(message.bouncedAt)}: ${message.bounceStatus ?? ""} ${message.bounceStatus?.startsWith("5") ? "(permanent: the address is suppressed)" : "(temporary)"}${message.bounceDetail ? `, "${message.bounceDetail}"` : ""}`
            : "no"}
        </dd>
        <dt>Opened</dt>
        <dd data-outcome="opened">
          {at(message.openedAt)}
          {times(message.openCount)}
        </dd>
        <dt>Clicked</dt>
        <dd data-outcome="clicked">
          {at(message.clickedAt)}
          {times(message.clickCount)}
        </dd>
        <dt>Replied</dt>
        <dd data-outcome="replied">
          {at(message.repliedAt)}
          {times(message.replyCount)}
        </dd>
        <dt>Unsubscribed</dt>
        <dd data-outcome="unsubscribed">{message.unsubscribedAt ? clock.when(message.unsubscribedAt) : "no"}</dd>
      </dl>
      {rates ? (
        <p className="muted small" data-email-step-rates={rates.nodeId}>
          {rates.sent === 1 ? "Of the 1 email" : `Of the ${rates.sent.toLocaleString("en")} emails`} this step has sent (all versions, all time): {ratesOf(rates, "sent")}; of those delivered: {ratesOf(rates, "delivered")}. Opens are a
          hint: some mail clients load images before anyone reads.
        </p>
      ) : null}
    </div>
  );
}
