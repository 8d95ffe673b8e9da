import { createHash } from "node:crypto";
import { inTx } from "@holdfast/db";
import { type ReceivedEmail, startSmtpTarget, type SmtpTarget } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllowList } from "../../src/base/allow-list";
import { claimInvitationEmails, invitationEmailState, sendClaimedInvitations } from "../../src/people/auth/invitation-mail";
import { acceptInvitation, acceptInvitationAsNewUser, inviteMemberByEmail, listOpenInvitations, viewInvitation } from "../../src/people/auth/invitations";
import { sessionUser, signIn } from "../../src/people/auth/sessions";
import { upsertMember } from "../../src/people/auth/users";
import type { SweepContext } from "../../src/run/sweeper/service";
import { invitationEmails } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

/**
 * Invitation emails (issue 39): with a system mailbox the owner's answer holds no link; the sweeper makes the link
 * when it claims the row, emails it to the invited address through the real SMTP sink, and records it. The row never
 * holds the token; a failed send is retried with its reason in words; Send again makes a new link and the old one
 * stops working.
 */
let bed: Bed;
let smtp: SmtpTarget;
let ctx: SweepContext;
let owner = "";
const pw = "a long enough password";
const appUrl = "https://holdfast.example.test";
const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");

/** The message's text with quoted-printable soft breaks and escapes undone. */
const bodyOf = (m: ReceivedEmail) =>
  (m.raw.split(/\r?\n\r?\n/).slice(1).join("\n\n") ?? "").replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
const tokenIn = (m: ReceivedEmail) => {
  const found = new RegExp(`${appUrl}/invite/([A-Za-z0-9_-]{43})`).exec(bodyOf(m));
  if (!found?.[1]) throw new Error(`no link in ${m.raw}`);
  return found[1];
};
const mailTo = (email: string) => smtp.received.filter((m) => m.to.some((to) => to.toLowerCase() === email.toLowerCase()));
const invite = (email: string, role: "viewer" | "editor" = "viewer") => inviteMemberByEmail(bed.t.db, { orgId: bed.orgId, email, role, invitedBy: owner, linkBase: "http://localhost:3000" });
const stateOf = async (id: string) => {
  const i = (await listOpenInvitations(bed.t.db, bed.orgId)).find((x) => x.id === id);
  return i ? invitationEmailState(i) : undefined;
};

beforeAll(async () => {
  bed = await sweeperBed();
  owner = await upsertMember(bed.t.db, { orgId: bed.orgId, email: "sam@acme.test", name: "Sam", password: pw, role: "owner" });
  const other = (await bed.rows("INSERT INTO organisations (slug, name) VALUES ('globex', 'Globex') RETURNING id"))[0].id;
  await upsertMember(bed.t.db, { orgId: other, email: "bob@globex.test", name: "Bob", password: pw, role: "editor" });
  smtp = await startSmtpTarget();
  ctx = {
    ...bed.ctx,
    systemMail: { url: `smtp+plain://127.0.0.1:${smtp.port}`, from: "Holdfast <ops@holdfast.test>", appUrl },
    egress: { allow: parseAllowList(`127.0.0.1:${smtp.port}`) },
  };
});
afterAll(async () => {
  await smtp?.close();
  await bed?.drop();
});

describe("invitation-emails", () => {
  it("emails each invitation once to the invited address with a working link; the owner's answer and the row hold no link", async () => {
    const forBob = await invite("Bob@Globex.test", "editor");
    const forNew = await invite("nina@new.test");
    for (const answer of [forBob, forNew]) {
      expect(Object.keys(answer).sort()).toEqual(["expiresAt", "invitationId", "sentTo"]);
      expect(JSON.stringify(answer)).not.toMatch(/invite\/|token|usr_|Bob"/);
    }
    expect(forBob.sentTo).toBe("Bob@Globex.test");
    // Owed, and no link exists yet.
    expect(await bed.rows("SELECT email_status, token_hash FROM invitations WHERE id = $1", [forBob.invitationId])).toEqual([{ email_status: "pending", token_hash: null }]);
    expect(await stateOf(forBob.invitationId)).toEqual({ kind: "sending" });

    const service = invitationEmails.make();
    expect(await service.runOnce(ctx)).toEqual({ sent: 2, failed: 0, retrying: 0 });
    expect(await service.runOnce(ctx)).toEqual({ sent: 0, failed: 0, retrying: 0 });
    // To the address as typed (the sink's envelope lowercases the domain).
    expect(smtp.received.map((m) => m.to.map((to) => to.toLowerCase())).sort()).toEqual([["bob@globex.test"], ["nina@new.test"]]);

    const [toBob] = mailTo("Bob@Globex.test");
    if (!toBob) throw new Error("no email to Bob");
    expect(toBob.subject).toBe("Sam invited you to Acme on Holdfast");
    const text = bodyOf(toBob);
    expect(text).toContain("Sam invited you to join Acme on Holdfast as an editor.");
    expect(text).toMatch(/It works once, until \d{4}-\d\d-\d\d \d\d:\d\d UTC\./);
    expect(text).toContain("If you did not expect this invitation, ignore this email");
    const bobToken = tokenIn(toBob);

    // The row keeps the hash only; nothing in the table is the token.
    const [row] = await bed.rows("SELECT email_status, email_attempts, token_hash, email_sent_at IS NOT NULL AS sent FROM invitations WHERE id = $1", [forBob.invitationId]);
    expect(row).toEqual({ email_status: "sent", email_attempts: 1, token_hash: hashOf(bobToken), sent: true });
    expect(JSON.stringify(await bed.rows("SELECT * FROM invitations"))).not.toContain(bobToken);
    expect(await stateOf(forBob.invitationId)).toMatchObject({ kind: "sent", at: expect.any(Date) });

    // The links work: Bob signs in and accepts; Nina makes her account from hers.
    const bob = await sessionUser(bed.t.db, (await signIn(bed.t.db, "bob@globex.test", pw))?.token);
    if (!bob) throw new Error("Bob cannot sign in");
    expect(await acceptInvitation(bed.t.db, bobToken, bob)).toMatchObject({ kind: "accepted", orgName: "Acme", role: "editor", joined: true });
    const [toNina] = mailTo("nina@new.test");
    if (!toNina) throw new Error("no email to Nina");
    expect(bodyOf(toNina)).toContain("as a viewer");
    const made = await acceptInvitationAsNewUser(bed.t.db, tokenIn(toNina), { name: "Nina", password: pw });
    expect(made.outcome).toMatchObject({ kind: "accepted", role: "viewer", joined: true });
  });

  it("a send that fails is retried with its reason in words, then sent; after maxAttempts it is failed, saying why", async () => {
    const down: SweepContext = { ...ctx, systemMail: { url: "smtp+plain://127.0.0.1:9", from: "ops@holdfast.test", appUrl }, egress: { allow: parseAllowList("127.0.0.1:9") } };
    const service = invitationEmails.make({ maxAttempts: 2 });
    const inv = await invite("retry@new.test");
    expect(await service.runOnce(down)).toEqual({ sent: 0, failed: 0, retrying: 1 });
    const retrying = await stateOf(inv.invitationId);
    expect(retrying).toEqual({ kind: "retrying", reason: "The deployment's mail server could not be reached." });
    expect(JSON.stringify(retrying)).not.toMatch(/ECONNREFUSED|connect|127\.0\.0\.1/);
    const firstHash = (await bed.rows("SELECT token_hash FROM invitations WHERE id = $1", [inv.invitationId]))[0].token_hash;
    expect(firstHash).toMatch(/^[0-9a-f]{64}$/);
    // The mailbox answers again: sent on the next attempt, with a link made by that attempt.
    expect(await service.runOnce(ctx)).toEqual({ sent: 1, failed: 0, retrying: 0 });
    const [mail] = mailTo("retry@new.test");
    if (!mail) throw new Error("no email");
    const token = tokenIn(mail);
    expect(hashOf(token)).not.toBe(firstHash);
    expect(await viewInvitation(bed.t.db, token, null)).toMatchObject({ kind: "open", offer: { orgName: "Acme", role: "viewer" } });
    expect(await bed.rows("SELECT email_status, email_attempts, email_problem FROM invitations WHERE id = $1", [inv.invitationId])).toEqual([
      { email_status: "sent", email_attempts: 2, email_problem: null },
    ]);

    // Down for good: failed after two attempts, in words; nothing more is tried.
    const gone = await invite("gone@new.test");
    expect(await service.runOnce(down)).toEqual({ sent: 0, failed: 0, retrying: 1 });
    expect(await service.runOnce(down)).toEqual({ sent: 0, failed: 1, retrying: 0 });
    expect(await service.runOnce(down)).toEqual({ sent: 0, failed: 0, retrying: 0 });
    expect(await stateOf(gone.invitationId)).toEqual({ kind: "failed", reason: "The deployment's mail server could not be reached." });

    // A sweeper without a mailbox (not configured like the web): failed, saying so.
    const unset = await invite("unset@new.test");
    expect(await service.runOnce(bed.ctx)).toEqual({ sent: 0, failed: 1, retrying: 0 });
    expect(await stateOf(unset.invitationId)).toEqual({ kind: "failed", reason: "The deployment's mail is not set up for sending (ask your operator)." });
  });

  it("Send again sends a new link and the old one stops working at once; a sender that died after its claim leaves a link nobody has", async () => {
    const service = invitationEmails.make();
    const first = await invite("again@new.test", "editor");
    expect(await service.runOnce(ctx)).toEqual({ sent: 1, failed: 0, retrying: 0 });
    const oldToken = tokenIn(mailTo("again@new.test")[0] as ReceivedEmail);
    expect(await viewInvitation(bed.t.db, oldToken, null)).toMatchObject({ kind: "open" });

    // Send again: the same invitation, renewed; its link is gone until the sender makes the new one.
    const again = await invite("again@new.test", "editor");
    expect(again.invitationId).toBe(first.invitationId);
    expect(await viewInvitation(bed.t.db, oldToken, null)).toMatchObject({ kind: "refused", reason: "unknown" });
    expect(await stateOf(first.invitationId)).toEqual({ kind: "sending" });

    // A sender claims it and dies before sending: its lease lapses and the next claim makes another link.
    const lost = await inTx(bed.t.db, (tx) => claimInvitationEmails(tx, 5, 60, 5));
    expect(lost.map((o) => o.claimed.id)).toEqual([first.invitationId]);
    expect(await service.runOnce(ctx)).toEqual({ sent: 0, failed: 0, retrying: 0 }); // still leased
    await bed.rows("UPDATE invitations SET email_claimed_until = now() - interval '1 second' WHERE id = $1", [first.invitationId]);
    expect(await service.runOnce(ctx)).toEqual({ sent: 1, failed: 0, retrying: 0 });
    const mails = mailTo("again@new.test");
    expect(mails).toHaveLength(2);
    const newToken = tokenIn(mails[1] as ReceivedEmail);
    expect(newToken).not.toBe(oldToken);
    expect(await viewInvitation(bed.t.db, lost[0]?.token ?? "", null)).toMatchObject({ kind: "refused", reason: "unknown" });
    expect(await viewInvitation(bed.t.db, newToken, null)).toMatchObject({ kind: "open", offer: { role: "editor" } });

    // Renewed while a sender holds its claim: that sender's email goes out with a dead link and records nothing; the
    // renewed invitation is sent afresh.
    const held = await inTx(bed.t.db, (tx) => claimInvitationEmails(tx, 5, 60, 5));
    expect(held).toHaveLength(0);
    await invite("again@new.test", "editor");
    const inFlight = await inTx(bed.t.db, (tx) => claimInvitationEmails(tx, 5, 60, 5));
    await invite("again@new.test", "editor");
    expect(await sendClaimedInvitations(ctx.db, ctx.systemMail, inFlight, { egress: ctx.egress ?? {} })).toEqual({ sent: 1, failed: 0, retrying: 0 });
    expect(await bed.rows("SELECT email_status, token_hash FROM invitations WHERE id = $1", [first.invitationId])).toEqual([{ email_status: "pending", token_hash: null }]);
    expect(await service.runOnce(ctx)).toEqual({ sent: 1, failed: 0, retrying: 0 });
    const last = mailTo("again@new.test").at(-1) as ReceivedEmail;
    expect(await viewInvitation(bed.t.db, tokenIn(last), null)).toMatchObject({ kind: "open" });
    expect(await viewInvitation(bed.t.db, inFlight[0]?.token ?? "", null)).toMatchObject({ kind: "refused", reason: "unknown" });
  });
});
