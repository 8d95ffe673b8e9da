import { approvedEmailCheck } from "../../people/approvals/email-check";
import { renderEmail } from "../../people/approvals/email";
import { smtpConnectionConfig } from "../../versions/connection-kinds/smtp";
import { type EmailMessage, performSendEmail } from "../../providers/effects/send-email";
import { contactsMaySend } from "../../store/sql/contacts";
import type { StepOutcome } from "../../base/outcome/outcome";
import { inboundEmailDomain, replyRoutingAddress } from "../../people/signals/routing";
import { unsubscribeBase, unsubscribeUrl } from "../../people/unsubscribe/token";
import { bounceAddress } from "../../people/email-outcomes/bounce";
import { decorateEmail, writtenHostsOf } from "../../people/email-outcomes/links";
import { automationsTrackOpensOfRun } from "../../store/sql/automations";
import { TemplateError } from "../../base/templates/render";
import { quietHoursHold } from "../sending-rules/quiet-hours-hold";
import { frequencyCapAfterSend, frequencyCapGate } from "../../people/sending-rules/frequency-cap-gate";
import { type Connector, takenOver } from "./connector";

/**
 * send_email: at the moment of sending, the templates are rendered, consent and the suppression list are checked by
 * the database, and the message goes out with a Message-ID derived from the effect key. SMTP cannot be asked what
 * it received, so there is no reconcile; a repeat is safe only where the provider drops a repeated Message-ID. An
 * email an approval approved (people/approvals/email-check.ts) goes out only as the approver saw it; otherwise it parks.
 */
export const sendEmailConnector: Connector<"send_email"> = {
  kind: "send_email",
  connection: { kind: "smtp", name: (node) => node.config.connection },
  providerIdempotent: ({ connection }) => smtpConnectionConfig.safeParse(connection?.config).data?.dedupesMessageId ?? false,
  async perform(ctx, key, begin): Promise<StepOutcome> {
    const { node, step, db } = ctx;
    const connection = ctx.connection;
    const smtp = smtpConnectionConfig.safeParse(connection?.config);
    if (!connection || !smtp.success) {
      return { kind: "fail", error: { code: "bad_connection", message: `connection "${node.config.connection}": ${smtp.error?.issues[0]?.message}`, permanent: true, notPerformed: true } };
    }
    const { config } = node;
    let message: EmailMessage;
    try {
      message = renderEmail(config, await ctx.templates());
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      return { kind: "fail", error: { code: "template_error", message: error.message, permanent: true, notPerformed: true } };
    }
    // Exactly one bare address: consent and suppression are checked for it, and nodemailer sends to nothing else
    // (a rendered "a@x, b@y" or "Name <b@y>" would otherwise reach someone never checked).
    // No trailing dot either: "a@x.com." reaches a@x.com's mailbox but would be another key for the cap and suppression.
    if (!/^[^\s@,;<>"()]+@[^\s@,;<>"()]+\.[^\s@,;<>"()]+$/.test(message.to) || message.to.endsWith(".")) {
      return { kind: "fail", error: { code: "bad_recipient", message: `"${message.to}" is not one email address`, permanent: true, notPerformed: true } };
    }
    // An approver's edit replaces the rendered subject and text here (and drops the HTML version).
    const approved = await approvedEmailCheck(db, step, node.id, message);
    if ("park" in approved) return approved.park;
    if (approved.edited) message = { ...approved.send };
    const permission = await contactsMaySend(db, step.orgId, message.to, config.requireConsent);
    const checkedAt = permission.checkedAt.toISOString();
    if (!permission.allowed) {
      const reason = permission.reason ?? "not allowed";
      return { kind: "done", output: { skipped: true, reason, to: message.to, consentCheckedAt: checkedAt }, skipped: { reason } };
    }
    // Sending rules (issue 44): outside quiet hours the send waits for the next opening, no attempt used.
    const quiet = await quietHoursHold(db, step);
    if (quiet) return quiet;
    // Replies route themselves: the Reply-To names this step, so a reply needs no In-Reply-To to find its run.
    const domain = inboundEmailDomain();
    if (domain) message.replyTo = replyRoutingAddress({ orgId: step.orgId, runId: step.runId, stepId: step.id }, domain);
    // One-click unsubscribe for the address just checked; never on a test run's message, so "Send to me" carries no
    // link that could suppress the contact.
    const base = ctx.simulation ? null : unsubscribeBase();
    if (base) message.unsubscribeUrl = unsubscribeUrl(base, { orgId: step.orgId, email: message.to, effectKey: key });
    if (!ctx.simulation) {
      // Outcomes (issue 43): bounces come back to the message's signed envelope sender; links go through the signed
      // redirect, the pixel is added when the automation tracks opens, and the footer links the unsubscribe page.
      if (domain) message.envelopeFrom = bounceAddress({ orgId: step.orgId, runId: step.runId, stepId: step.id }, domain);
      if (base) {
        const trackOpens = await automationsTrackOpensOfRun(db, step.orgId, step.runId);
        const decoration = { base, message: { orgId: step.orgId, effectKey: key }, trackOpens, unsubscribeUrl: message.unsubscribeUrl ?? null,
          writtenHosts: writtenHostsOf(config.text, config.html) };
        Object.assign(message, decorateEmail({ text: message.text, html: message.html }, decoration));
      }
    }
    // The frequency cap (issue 44): counted under the address's lock right before the send; a test run is neither.
    const capSend = { orgId: step.orgId, runId: step.runId, stepId: step.id, effectKey: key, to: message.to, test: ctx.simulation !== null };
    const capped = await frequencyCapGate(db, capSend);
    if (capped) return capped;
    if (!(await begin())) return takenOver(key);
    const input = { config: smtp.data, password: connection.password, message, idempotencyKey: key, runId: step.runId };
    // A test run: the message is built exactly as it would go out and recorded, not sent (simulate.ts).
    const sent = ctx.simulation ? await ctx.simulation.email(input) : await performSendEmail(input);
    await frequencyCapAfterSend(db, capSend, sent);
    return sent.kind === "done" ? { ...sent, output: { ...(sent.output as object), consentCheckedAt: checkedAt } } : sent;
  },
};
