import { GraphCache } from "@holdfast/core/versions";
import { acceptInvitation, sessionUser, signIn, upsertMember } from "@holdfast/core/people";
import { type SweepContext, sweepServiceDefinitions } from "@holdfast/core/run";
import { createTestDatabase, startSmtpTarget, type SmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Members' invitations through tRPC when the deployment has a system mailbox (issue 39): the owner's answer is the
 * same for an address with an account and a new one, and holds no link; the pending list says where each email is;
 * the sweeper's email carries the only link. The web's env is read once at import, so it is set before the router
 * is imported (trpc.test.ts covers the deployment without a mailbox).
 */
let smtp: SmtpTarget;
let t: TestDatabase;
const pw = "a long enough password";
process.env.HOLDFAST_SYSTEM_SMTP_URL = "smtp+plain://127.0.0.1:2525";
process.env.HOLDFAST_PUBLIC_URL = "https://holdfast.example.test";
const { createCallerFactory } = await import("../src/server/trpc/init");
const { appRouter } = await import("../src/server/trpc/router");
const createCaller = createCallerFactory(appRouter);

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget();
  const acme = (await t.sql.query("INSERT INTO organisations (slug, name) VALUES ('acme', 'Acme') RETURNING id")).rows[0].id;
  const other = (await t.sql.query("INSERT INTO organisations (slug, name) VALUES ('other', 'Other') RETURNING id")).rows[0].id;
  await upsertMember(t.db, { orgId: acme, email: "sam@acme.test", name: "Sam", password: pw, role: "owner" });
  await upsertMember(t.db, { orgId: other, email: "bob@other.test", name: "Bob Other", password: pw, role: "owner" });
});
afterAll(async () => {
  await smtp?.close();
  await t?.drop();
});

const callerFor = async (email: string) => createCaller({ db: t.db, user: await sessionUser(t.db, (await signIn(t.db, email, pw))?.token) });

describe("invitations with a system mailbox", () => {
  it("answers without a link, the same for an existing and a new address; the email carries the link, and the list says it was sent", async () => {
    const sam = await callerFor("sam@acme.test");
    const existing = await sam.members.invite({ orgSlug: "acme", email: "Bob@Other.test", role: "editor" });
    const fresh = await sam.members.invite({ orgSlug: "acme", email: "new@nowhere.test", role: "editor" });
    for (const a of [existing, fresh]) {
      expect(Object.keys(a).sort()).toEqual(["delivery", "expiresAt", "invitationId", "sentTo"]);
      expect(a.delivery).toBe("email");
      expect(JSON.stringify(a)).not.toMatch(/invite\/|Bob Other|usr_|link|token/);
    }
    expect(existing.sentTo).toBe("Bob@Other.test");
    const pending = async () => Object.fromEntries((await sam.members.invitations({ orgSlug: "acme" })).map((i) => [i.email, i.emailState]));
    expect(await pending()).toEqual({ "Bob@Other.test": { kind: "sending" }, "new@nowhere.test": { kind: "sending" } });

    const ctx: SweepContext = {
      db: t.db,
      actor: "sweeper",
      graphs: new GraphCache(),
      systemMail: { url: `smtp+plain://127.0.0.1:${smtp.port}`, from: "ops@holdfast.test" },
    };
    const invitationEmails = sweepServiceDefinitions.find((d) => d.name === "invitation-emails");
    expect(await invitationEmails?.make().runOnce(ctx)).toEqual({ sent: 2, failed: 0, retrying: 0 });
    expect(await pending()).toEqual({ "Bob@Other.test": { kind: "sent", at: expect.any(Date) }, "new@nowhere.test": { kind: "sent", at: expect.any(Date) } });
    // Without HOLDFAST_APP_URL the sweeper links to the web's public address, recorded with the invitation.
    const toBob = smtp.received.find((m) => m.to[0]?.toLowerCase() === "bob@other.test");
    const token = /https:\/\/holdfast\.example\.test\/invite\/([A-Za-z0-9_-]{43})/.exec(toBob?.raw.replace(/=\r?\n/g, "") ?? "")?.[1];
    const bob = await sessionUser(t.db, (await signIn(t.db, "bob@other.test", pw))?.token);
    if (!token || !bob) throw new Error("no link or no session");
    expect(await acceptInvitation(t.db, token, bob)).toMatchObject({ kind: "accepted", orgName: "Acme", role: "editor" });
    expect((await sam.members.list({ orgSlug: "acme" })).map((m) => m.email).sort()).toEqual(["bob@other.test", "sam@acme.test"]);
  });
});
