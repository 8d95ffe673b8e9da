import { createHmac, hkdfSync } from "node:crypto";
import { secretKey } from "../../store/keys/secret-key";
import type { SmtpConnectionConfig } from "../../versions/connection-kinds/smtp";
import { type EgressOptions, egressRefusalOf, egressStepError } from "../net/egress";
import { inMemoryMailTransport } from "../net/smtp";
import { smtpTransport } from "../connections/smtp-transport";
import { failedOutcomeCode, traceProviderCall } from "../../base/tracing";
import type { StepOutcome } from "../../base/outcome/outcome";

export type { SmtpConnectionConfig };

export interface EmailMessage {
  to: string;
  subject: string;
  text?: string;
  html?: string;
  /** The routing address replies go to (people/signals/routing.ts), when inbound email is configured. */
  replyTo?: string;
  /** The one-click unsubscribe link (RFC 8058, people/unsubscribe/token.ts); a test run's message has none. */
  unsubscribeUrl?: string;
  /** The envelope sender (MAIL FROM, so the Return-Path): the message's signed bounce address (people/email-outcomes/bounce.ts). */
  envelopeFrom?: string;
}

/** A send_email step's output once the server took the message: what was sent, as sent. */
export interface SentEmailRecord {
  messageId: string;
  from: string;
  to: string;
  replyTo?: string;
  subject: string;
  text?: string;
  html?: string;
  accepted: string[];
  rejected: string[];
  response: string;
}

let messageIdKey: Buffer | undefined;

/**
 * The Message-ID is a function of the effect key, so every attempt of one effect sends the same one; keyed with the
 * deployment's secret, so nobody who knows a run's id can compute it and forge a reply that threads onto it.
 */
export function messageIdFor(key: string, from: string): string {
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? "holdfast.invalid";
  messageIdKey ??= Buffer.from(hkdfSync("sha256", secretKey(), Buffer.alloc(0), "holdfast message ids v1", 32));
  return `<hf.${createHmac("sha256", messageIdKey).update(key).digest("hex").slice(0, 40)}@${domain}>`;
}

export { smtpTransport };

export const effectKeyHeader = "X-Holdfast-Effect-Key";

/**
 * One message through nodemailer over SMTP. The effect's result records what was sent (from, to, Reply-To, the
 * rendered subject and bodies, our Message-ID, the correlation key for replies) and the server's answer to DATA: the
 * run page shows the email from this record, and erasing the contact scrubs it with the step's output. Errors are
 * classified by where the SMTP conversation stopped: before DATA nothing was sent (given back), a refusal with a
 * code is definite, and a lost connection or timeout after the body was sent is uncertain.
 */
export interface SendEmailInput {
  config: SmtpConnectionConfig;
  password: string | null;
  message: EmailMessage;
  idempotencyKey: string;
  runId: string;
  /** The egress guard's settings (tests); default HOLDFAST_EGRESS_ALLOW. */
  egress?: EgressOptions;
}

export function performSendEmail(input: SendEmailInput): Promise<StepOutcome> {
  const attributes = { "server.address": input.config.host, "server.port": input.config.port };
  return traceProviderCall({ provider: "smtp", operation: "send", runId: input.runId, effectKey: input.idempotencyKey, attributes }, () => sendEmail(input), failedOutcomeCode);
}

async function sendEmail(input: SendEmailInput): Promise<StepOutcome> {
  const { config, password, message, idempotencyKey } = input;
  const messageId = messageIdFor(idempotencyKey, config.from);
  let transport: Awaited<ReturnType<typeof smtpTransport>>;
  try {
    transport = await smtpTransport(config, password, input.egress);
  } catch (error) {
    // Refused by the egress guard (permanent), or the name did not resolve (given back, like any unreachable server).
    const refused = egressRefusalOf(error);
    if (refused) return { kind: "fail", error: egressStepError(refused) };
    return classify(Object.assign(error as Error, { code: "EDNS", command: "CONN" }));
  }
  try {
    const info = await transport.sendMail(mailOptions(config.from, message, messageId, idempotencyKey, input.runId));
    const sent: SentEmailRecord = {
      messageId,
      from: config.from,
      to: message.to,
      ...(message.replyTo !== undefined ? { replyTo: message.replyTo } : {}),
      subject: message.subject,
      ...(message.text !== undefined ? { text: message.text } : {}),
      ...(message.html !== undefined ? { html: message.html } : {}),
      accepted: info.accepted.map(String),
      rejected: info.rejected.map(String),
      response: info.response,
    };
    return { kind: "done", output: sent };
  } catch (error) {
    return classify(error as Error & { code?: string; responseCode?: number; command?: string });
  } finally {
    transport.close();
  }
}

/** What nodemailer is given for one message: the same for a real send and a test run's rendering. */
function mailOptions(from: string, message: EmailMessage, messageId: string, idempotencyKey: string, runId: string) {
  return {
    from,
    to: message.to,
    subject: message.subject,
    ...(message.text !== undefined ? { text: message.text } : {}),
    ...(message.html !== undefined ? { html: message.html } : {}),
    ...(message.replyTo !== undefined ? { replyTo: message.replyTo } : {}),
    messageId,
    ...(message.envelopeFrom !== undefined ? { envelope: { from: message.envelopeFrom, to: [message.to] } } : {}),
    headers: {
      [effectKeyHeader]: idempotencyKey,
      "X-Holdfast-Run-Id": runId,
      ...(message.unsubscribeUrl !== undefined ? { "List-Unsubscribe": `<${message.unsubscribeUrl}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" } : {}),
    },
  };
}

/** A test run's email: the message exactly as it would go out, headers included, and nothing sent. */
export interface SimulatedEmailRecord extends Pick<SentEmailRecord, "messageId" | "from" | "to" | "replyTo" | "subject" | "text" | "html"> {
  simulated: true;
  /** The message's headers as they would be on the wire (MIME part headers left out). */
  headers: Record<string, string>;
}

/**
 * Builds the message as a send would (the same options, nodemailer's own MIME encoder) into memory: no server, no
 * connection. A test run records it as the step's output.
 */
export async function renderEmailMessage(input: { from: string; message: EmailMessage; idempotencyKey: string; runId: string }): Promise<SimulatedEmailRecord> {
  const { message } = input;
  const messageId = messageIdFor(input.idempotencyKey, input.from);
  const built = await inMemoryMailTransport().sendMail(mailOptions(input.from, message, messageId, input.idempotencyKey, input.runId));
  const raw = (built.message as Buffer).toString("utf8");
  const head = raw.slice(0, raw.indexOf("\n\n") === -1 ? raw.length : raw.indexOf("\n\n")).replace(/\n[ \t]+/g, " ");
  const headers: Record<string, string> = {};
  for (const line of head.split("\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon)] = line.slice(colon + 1).trim();
  }
  return {
    simulated: true,
    messageId,
    from: input.from,
    to: message.to,
    ...(message.replyTo !== undefined ? { replyTo: message.replyTo } : {}),
    subject: message.subject,
    ...(message.text !== undefined ? { text: message.text } : {}),
    ...(message.html !== undefined ? { html: message.html } : {}),
    headers,
  };
}

const beforeData = /^(CONN|API|EHLO|HELO|LHLO|STARTTLS|AUTH|MAIL FROM|RCPT TO)/;

function classify(e: Error & { code?: string; responseCode?: number; command?: string }): StepOutcome {
  const base = { message: e.message, smtpCode: e.responseCode ?? null, command: e.command ?? null };
  if (e.code === "EAUTH") {
    return { kind: "fail", error: { ...base, code: "authorisation", authorisation: true, notPerformed: true, reason: "the mailbox refused our login: reconnect it" } };
  }
  const refusedCode = typeof e.responseCode === "number" ? e.responseCode : undefined;
  if (refusedCode !== undefined && (e.code === "EENVELOPE" || e.code === "EMESSAGE" || beforeData.test(e.command ?? ""))) {
    // The server answered with a code: it did not take the message.
    if (refusedCode >= 500) return { kind: "fail", error: { ...base, code: `smtp_${refusedCode}`, permanent: true, notPerformed: true } };
    return { kind: "retry", error: { ...base, code: `smtp_${refusedCode}`, notPerformed: true } };
  }
  if (beforeData.test(e.command ?? "") || e.code === "ECONNECTION" || e.code === "EDNS") {
    return { kind: "retry", error: { ...base, code: "smtp_unreachable", notPerformed: true } };
  }
  // Lost connection or timeout once the body may have been sent: the server may have accepted it.
  return { kind: "retry", error: { ...base, code: e.code === "ETIMEDOUT" ? "timeout" : "smtp_uncertain" } };
}
