import { type Db, inTx, type Tx } from "@holdfast/db";
import { type SystemMail, systemMailTransport } from "../../providers/connections/notices";
import { type EgressOptions, egressRefusalOf } from "../../providers/net/egress";
import {
  type ClaimedInvitation,
  type InvitationEmailProblem,
  invitationsClaimOwedEmail,
  invitationsSettleEmail,
  type OpenInvitation,
} from "../../store/sql/invitations";
import { invitationPath, newInvitationToken } from "./invitations";

/**
 * Invitation emails, sent by the sweeper through the deployment's system mailbox (providers/connections/notices.ts). The web
 * only marks an email owed (inviteMemberByEmail); here a batch is claimed and each claimed row gets its link in the
 * claiming statement, from a token made here and held in memory only until the email is written. Nothing that yields
 * the link is stored, so a database copy holds no usable link and the owner never sees one.
 *
 * A sender that dies after the server took the message and before its record leaves the claim to lapse; the next
 * claim makes a new link and sends again, so the person may get two emails, of which the first link then says it
 * was replaced. Each email has its own Message-ID (the link differs): a server that drops repeats by Message-ID must
 * not drop the one with the working link.
 */

/** A claimed invitation and the token whose hash the claim set. */
export interface OwedInvitationEmail {
  claimed: ClaimedInvitation;
  token: string;
}

/**
 * Claims up to `batch` owed emails in `tx` (the sweeper's look): `batch` tokens are made, their hashes given to the
 * claim, and each claimed row paired with its token.
 */
export async function claimInvitationEmails(tx: Tx, batch: number, leaseSeconds: number, maxAttempts: number): Promise<OwedInvitationEmail[]> {
  const tokens = Array.from({ length: batch }, () => newInvitationToken());
  const claimed = await invitationsClaimOwedEmail(
    tx,
    tokens.map((t) => t.hash),
    leaseSeconds,
    maxAttempts,
  );
  return claimed.map((c) => {
    const made = tokens[c.slot - 1];
    if (made?.hash !== c.tokenHash) throw new Error(`invitation ${c.id}: the claim paired it with another token`);
    return { claimed: c, token: made.token };
  });
}

const withArticle = (role: string) => `${/^[aeiou]/.test(role) ? "an" : "a"} ${role}`;

/** The invitation in plain words: who invites, to what, as what, the link, until when, and what to do if unexpected. */
export function invitationEmailText(
  i: Pick<ClaimedInvitation, "orgName" | "inviterName" | "role" | "expiresAt">,
  link: string,
): { subject: string; text: string } {
  const who = i.inviterName ?? "An owner";
  const until = `${i.expiresAt.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return {
    subject: `${who} invited you to ${i.orgName} on Holdfast`,
    text: [
      `${who} invited you to join ${i.orgName} on Holdfast as ${withArticle(i.role)}.`,
      `To accept, open this link:\n${link}`,
      `It works once, until ${until}. If you already have a Holdfast account with this address, sign in when asked; otherwise you choose your name and password there.`,
      "If you did not expect this invitation, ignore this email: nothing happens unless you open the link and accept.",
    ].join("\n\n"),
  };
}

/** The link in an invitation's email: HOLDFAST_APP_URL when the sweeper has it, else the web's public address. */
export function invitationLink(mail: SystemMail, linkBase: string | null, token: string): string | null {
  const base = mail.appUrl ?? linkBase;
  return base ? `${base.replace(/\/$/, "")}${invitationPath(token)}` : null;
}

const problems: Record<InvitationEmailProblem, string> = {
  no_mailbox: "The deployment's mail is not set up for sending (ask your operator).",
  egress_refused: "The deployment's network rules do not allow reaching its mail server (ask your operator).",
  unreachable: "The deployment's mail server could not be reached.",
  login_refused: "The deployment's mail server refused its login (ask your operator).",
  address_refused: "The mail server refused this address: check it is spelled right (revoke, then invite the right one).",
  message_refused: "The mail server refused the message.",
  unknown: "Sending stopped for a reason the mail server did not give.",
};

/** Why an invitation's email did not go, in words for the owner (never a library's message). */
export const invitationEmailProblemMessage = (p: InvitationEmailProblem): string => problems[p];

/** Where an invitation's email is: sent, being sent, not sent yet and trying again, or failed for good. */
export type InvitationEmailState = { kind: "sent"; at: Date | null } | { kind: "sending" } | { kind: "retrying" | "failed"; reason: string };

/** Where an invitation's email is, with any reason in words for the owner; null when its link was shown to the owner. */
export function invitationEmailState(i: Pick<OpenInvitation, "emailStatus" | "emailSentAt" | "emailProblem" | "expired">): InvitationEmailState | null {
  switch (i.emailStatus) {
    case null:
      return null;
    case "sent":
      return { kind: "sent", at: i.emailSentAt };
    case "sending":
      return { kind: "sending" };
    case "pending":
      if (i.expired) return { kind: "failed", reason: "It expired before it could be sent: send it again." };
      return i.emailProblem ? { kind: "retrying", reason: problems[i.emailProblem] } : { kind: "sending" };
    case "failed":
      return { kind: "failed", reason: problems[i.emailProblem ?? "unknown"] };
  }
}

/** A send's failure as a problem code, and whether trying again may help. */
function classify(error: unknown): { problem: InvitationEmailProblem; final: boolean } {
  if (egressRefusalOf(error)) return { problem: "egress_refused", final: true };
  const e = error as { code?: string; responseCode?: number; command?: string };
  if (e.code === "EAUTH") return { problem: "login_refused", final: false };
  const code = typeof e.responseCode === "number" ? e.responseCode : undefined;
  if (code !== undefined && /^RCPT TO/.test(e.command ?? "")) return { problem: "address_refused", final: code >= 500 };
  if (code !== undefined && (e.code === "EENVELOPE" || e.code === "EMESSAGE")) return { problem: "message_refused", final: code >= 500 };
  if (e.code === "ECONNECTION" || e.code === "EDNS" || e.code === "ETIMEDOUT" || e.code === "ESOCKET" || /^CONN/.test(e.command ?? "")) {
    return { problem: "unreachable", final: false };
  }
  return { problem: "unknown", final: false };
}

export interface InvitationSendResult {
  sent: number;
  failed: number;
  retrying: number;
}

/**
 * Sends each claimed invitation's email and records it, by the claim that took it (its link): sent; or not, with
 * why, to retry or failed for good (a refused address or network rule, or after `maxAttempts`). Without a system
 * mailbox (a sweeper not configured like the web) each is failed with that said.
 */
export async function sendClaimedInvitations(
  db: Db,
  mail: SystemMail | null,
  owed: OwedInvitationEmail[],
  opts: { maxAttempts?: number; egress?: EgressOptions } = {},
): Promise<InvitationSendResult> {
  const maxAttempts = opts.maxAttempts ?? 5;
  const result: InvitationSendResult = { sent: 0, failed: 0, retrying: 0 };
  if (owed.length === 0) return result;
  const settle = (c: ClaimedInvitation, outcome: Parameters<typeof invitationsSettleEmail>[3]) =>
    inTx(db, (tx) => invitationsSettleEmail(tx, c.id, c.tokenHash, outcome));
  let transport: Awaited<ReturnType<typeof systemMailTransport>> | null = null;
  try {
    for (const { claimed: c, token } of owed) {
      const link = mail ? invitationLink(mail, c.linkBase, token) : null;
      if (!mail || !link) {
        await settle(c, { status: "failed", problem: "no_mailbox" });
        result.failed++;
        continue;
      }
      let failure: ReturnType<typeof classify> | null = null;
      try {
        transport ??= await systemMailTransport(mail, opts.egress);
        const { subject, text } = invitationEmailText(c, link);
        const domain = new URL(mail.url).hostname || "holdfast";
        await transport.sendMail({ from: mail.from, to: c.email, subject, text, messageId: `<invitation-${c.id}-${c.tokenHash.slice(0, 16)}@${domain}>` });
      } catch (error) {
        failure = classify(error);
        transport?.close();
        transport = null;
      }
      // Recorded outside the send's try: a failed record after a send is not a failed send (the claim lapses instead).
      if (!failure) {
        await settle(c, { status: "sent" });
        result.sent++;
        continue;
      }
      const final = failure.final || c.attempts >= maxAttempts;
      await settle(c, { status: final ? "failed" : "pending", problem: failure.problem });
      if (final) result.failed++;
      else result.retrying++;
    }
  } finally {
    transport?.close();
  }
  return result;
}
