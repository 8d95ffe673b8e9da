import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { createDb, type Db, type DbScope, urlAsRole } from "@holdfast/db";
import { createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  acceptInvitation,
  acceptInvitationAsNewUser,
  declineInvitation,
  inviteMember,
  listOpenInvitations,
  type OrgScope,
  revokeInvitation,
  viewInvitation,
} from "../src/people/auth/invitations";
import { sessionIdOf, sessionUser, signIn } from "../src/people/auth/sessions";
import { upsertMember } from "../src/people/auth/users";
import { membershipsList } from "../src/store/sql/memberships";

/**
 * Invitations (security finding L1). Before, an owner of one organisation who "added" the address of another
 * organisation's user made them a member at once and was told the account existed (`created: false`, then their name
 * in the list). Now the owner gets a link and the same answer either way, and nobody is a member until they accept
 * with their own session (or make the account the link is for). A link works once, for 7 days by the database clock;
 * expired, revoked, declined, used and someone else's links are refused in words. Time moves in SQL.
 */
let t: TestDatabase;
const ids = {} as Record<"acme" | "globex" | "olivia" | "bob", string>;
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;
const pw = "a long enough password";
const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");
const userOf = async (email: string) => {
  const s = await signIn(t.db, email, pw);
  const u = await sessionUser(t.db, s?.token);
  if (!u) throw new Error(`${email} could not sign in`);
  return u;
};
const isMember = async (orgId: string, email: string) => (await membershipsList(t.db, orgId)).some((m) => m.email === email);

beforeAll(async () => {
  t = await createTestDatabase();
  ids.acme = (await q("INSERT INTO organisations (slug, name) VALUES ('acme', 'Acme') RETURNING id"))[0].id;
  ids.globex = (await q("INSERT INTO organisations (slug, name) VALUES ('globex', 'Globex') RETURNING id"))[0].id;
  ids.olivia = await upsertMember(t.db, { orgId: ids.acme, email: "olivia@acme.test", name: "Olivia", password: pw, role: "owner" });
  ids.bob = await upsertMember(t.db, { orgId: ids.globex, email: "bob@globex.test", name: "Bob Globex", password: pw, role: "editor" });
});
afterAll(async () => t?.drop());

describe("inviting", () => {
  it("answers the same for an address with an account elsewhere and for a new one; neither is a member until they accept", async () => {
    const existing = await inviteMember(t.db, { orgId: ids.acme, email: "Bob@Globex.test", role: "editor", invitedBy: ids.olivia });
    const fresh = await inviteMember(t.db, { orgId: ids.acme, email: "nobody@new.test", role: "editor", invitedBy: ids.olivia });
    for (const answer of [existing, fresh]) {
      expect(Object.keys(answer).sort()).toEqual(["expiresAt", "invitationId", "token"]);
      expect(answer.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(JSON.stringify(answer)).not.toMatch(/Bob Globex|usr_|created/);
    }
    expect(await isMember(ids.acme, "bob@globex.test")).toBe(false);
    expect(await q("SELECT count(*)::int AS n FROM memberships WHERE org_id = $1 AND user_id = $2", [ids.acme, ids.bob])).toEqual([{ n: 0 }]);
    // Stored: the hash only, 7 days from now by the database clock; listed apart, with the address as typed.
    const [row] = await q(
      `SELECT token_hash, email, email_typed, expires_at - created_at AS life, abs(extract(epoch FROM created_at - now())) < 60 AS recent
       FROM invitations WHERE id = $1`,
      [existing.invitationId],
    );
    expect(row).toMatchObject({ token_hash: hashOf(existing.token), email: "bob@globex.test", email_typed: "Bob@Globex.test", life: { days: 7 }, recent: true });
    expect(JSON.stringify(await q("SELECT * FROM invitations"))).not.toContain(existing.token);
    const pending = await listOpenInvitations(t.db, ids.acme);
    expect(pending.map((p) => [p.email, p.role, p.expired])).toEqual(
      expect.arrayContaining([
        ["Bob@Globex.test", "editor", false],
        ["nobody@new.test", "editor", false],
      ]),
    );
    expect(JSON.stringify(pending)).not.toContain("Bob Globex");
    await revokeInvitation(t.db, ids.acme, existing.invitationId);
    await revokeInvitation(t.db, ids.acme, fresh.invitationId);
  });

  it("again for the same address renews the pending invitation: one row, a new link, the old link no longer works", async () => {
    const first = await inviteMember(t.db, { orgId: ids.acme, email: "ren@new.test", role: "viewer", invitedBy: ids.olivia });
    await q("UPDATE invitations SET created_at = now() - interval '8 days', expires_at = now() - interval '1 day' WHERE id = $1", [first.invitationId]);
    const [a, b] = await Promise.all([
      inviteMember(t.db, { orgId: ids.acme, email: "ren@new.test", role: "approver", invitedBy: ids.olivia }),
      inviteMember(t.db, { orgId: ids.acme, email: "REN@new.test", role: "approver", invitedBy: ids.olivia }),
    ]);
    expect(a.invitationId).toBe(first.invitationId);
    expect(b.invitationId).toBe(first.invitationId);
    const rows = await q("SELECT role, expires_at > now() + interval '6 days' AS renewed FROM invitations WHERE org_id = $1 AND email = 'ren@new.test'", [ids.acme]);
    expect(rows).toEqual([{ role: "approver", renewed: true }]);
    expect(await viewInvitation(t.db, first.token, null)).toMatchObject({ kind: "refused", reason: "unknown" });
    const latest = (await q("SELECT token_hash FROM invitations WHERE id = $1", [first.invitationId]))[0].token_hash;
    const live = [a, b].find((x) => hashOf(x.token) === latest);
    expect(await viewInvitation(t.db, live?.token ?? "", null)).toMatchObject({ kind: "open", visitor: "signed_out", offer: { orgName: "Acme", role: "approver" } });
    await revokeInvitation(t.db, ids.acme, first.invitationId);
  });

  it("a current member's address is refused in words (the owner sees the members anyway)", async () => {
    await expect(inviteMember(t.db, { orgId: ids.acme, email: "OLIVIA@acme.test", role: "viewer", invitedBy: ids.olivia })).rejects.toMatchObject({
      code: "member_exists",
      message: "OLIVIA@acme.test is already a member of this organisation: change their role in the list instead",
    });
  });
});

describe("accepting", () => {
  it("with the invited user's session makes them a member; accepting again changes nothing and reads back what happened", async () => {
    const inv = await inviteMember(t.db, { orgId: ids.acme, email: "bob@globex.test", role: "approver", invitedBy: ids.olivia });
    const bob = await userOf("bob@globex.test");
    expect(await viewInvitation(t.db, inv.token, bob)).toMatchObject({ kind: "open", visitor: "invited", offer: { orgName: "Acme", role: "approver" } });
    const first = await acceptInvitation(t.db, inv.token, bob);
    expect(first).toMatchObject({ kind: "accepted", orgName: "Acme", role: "approver", joined: true, again: false });
    expect((await membershipsList(t.db, ids.acme)).find((m) => m.email === "bob@globex.test")).toMatchObject({ name: "Bob Globex", role: "approver" });
    const [second, third] = await Promise.all([acceptInvitation(t.db, inv.token, bob), acceptInvitation(t.db, inv.token, bob)]);
    for (const again of [second, third]) expect(again).toMatchObject({ kind: "accepted", role: "approver", joined: false, again: true });
    expect(await q("SELECT count(*)::int AS n FROM memberships WHERE org_id = $1 AND user_id = $2", [ids.acme, ids.bob])).toEqual([{ n: 1 }]);
    expect(await listOpenInvitations(t.db, ids.acme)).not.toContainEqual(expect.objectContaining({ id: inv.invitationId }));
    // Removed later: the used link does not bring them back.
    await q("DELETE FROM memberships WHERE org_id = $1 AND user_id = $2", [ids.acme, ids.bob]);
    expect(await acceptInvitation(t.db, inv.token, bob)).toMatchObject({ kind: "accepted", role: null, again: true });
    expect(await isMember(ids.acme, "bob@globex.test")).toBe(false);
  });

  it("refuses someone else's session, an expired, a revoked, a declined and a used link, in words, and writes nothing", async () => {
    const olivia = await userOf("olivia@acme.test");
    const bob = await userOf("bob@globex.test");
    const forBob = await inviteMember(t.db, { orgId: ids.acme, email: "bob@globex.test", role: "owner", invitedBy: ids.olivia });
    // Olivia (an owner of acme, holding the link she made) cannot use it as herself.
    expect(await viewInvitation(t.db, forBob.token, olivia)).toMatchObject({ kind: "open", visitor: "other_address" });
    expect(await acceptInvitation(t.db, forBob.token, olivia)).toEqual({
      kind: "refused",
      reason: "other_address",
      message: "This invitation is for another email address than the one you are signed in with.",
    });
    expect(await declineInvitation(t.db, forBob.token, olivia)).toMatchObject({ kind: "refused", reason: "other_address" });
    expect(await q("SELECT accepted_at, declined_at FROM invitations WHERE id = $1", [forBob.invitationId])).toEqual([{ accepted_at: null, declined_at: null }]);

    // Expired by the database clock.
    await q("UPDATE invitations SET created_at = now() - interval '8 days', expires_at = now() - interval '1 second' WHERE id = $1", [forBob.invitationId]);
    const expired = { kind: "refused", reason: "expired", message: "This invitation has expired: ask the owner for a new one." };
    expect(await acceptInvitation(t.db, forBob.token, bob)).toEqual(expired);
    expect(await viewInvitation(t.db, forBob.token, bob)).toEqual(expired);
    expect(await listOpenInvitations(t.db, ids.acme)).toContainEqual(expect.objectContaining({ id: forBob.invitationId, expired: true }));
    await q("UPDATE invitations SET expires_at = now() + interval '1 day' WHERE id = $1", [forBob.invitationId]);

    // Revoked by the owner.
    expect(await revokeInvitation(t.db, ids.acme, forBob.invitationId)).toBe(true);
    expect(await revokeInvitation(t.db, ids.acme, forBob.invitationId)).toBe(false);
    expect(await acceptInvitation(t.db, forBob.token, bob)).toMatchObject({ kind: "refused", reason: "revoked", message: expect.stringMatching(/^This invitation was withdrawn/) });
    expect(await isMember(ids.acme, "bob@globex.test")).toBe(false);

    // Declined by the person, then not acceptable.
    const again = await inviteMember(t.db, { orgId: ids.acme, email: "bob@globex.test", role: "viewer", invitedBy: ids.olivia });
    expect(await declineInvitation(t.db, again.token, bob)).toMatchObject({ kind: "refused", reason: "declined" });
    expect(await acceptInvitation(t.db, again.token, bob)).toMatchObject({ kind: "refused", reason: "declined" });
    expect(await isMember(ids.acme, "bob@globex.test")).toBe(false);

    // A malformed or unknown link.
    for (const bad of ["", "x", "A".repeat(43), `${again.token}x`]) expect(await viewInvitation(t.db, bad, bob)).toMatchObject({ kind: "refused", reason: "unknown" });
  });
});

describe("a new person", () => {
  it("makes their account from the link: account, membership and a session in one transaction; the link is then used", async () => {
    const inv = await inviteMember(t.db, { orgId: ids.acme, email: "Nina@New.test", role: "editor", invitedBy: ids.olivia });
    expect(await viewInvitation(t.db, inv.token, null)).toMatchObject({ kind: "open", visitor: "signed_out", accountExists: false });
    await expect(acceptInvitationAsNewUser(t.db, inv.token, { name: "Nina", password: "short" })).rejects.toMatchObject({ code: "invalid_account" });
    await expect(acceptInvitationAsNewUser(t.db, inv.token, { name: "  ", password: pw })).rejects.toMatchObject({ code: "invalid_account" });
    const made = await acceptInvitationAsNewUser(t.db, inv.token, { name: "Nina", password: pw });
    expect(made.outcome).toMatchObject({ kind: "accepted", orgName: "Acme", role: "editor", joined: true });
    const nina = await sessionUser(t.db, made.session?.token);
    expect(nina).toMatchObject({ email: "nina@new.test", name: "Nina", memberships: [{ orgSlug: "acme", role: "editor" }] });
    expect(await acceptInvitationAsNewUser(t.db, inv.token, { name: "Someone", password: "another long password" })).toMatchObject({
      outcome: { kind: "refused", reason: "used" },
      session: null,
    });
    expect(await signIn(t.db, "nina@new.test", "another long password")).toBeNull();
    if (nina) expect(await acceptInvitation(t.db, inv.token, nina)).toMatchObject({ kind: "accepted", again: true, role: "editor" });
  });

  it("cannot take over an address that has an account: the holder of its link is told to sign in, and nothing changes", async () => {
    const inv = await inviteMember(t.db, { orgId: ids.acme, email: "bob@globex.test", role: "owner", invitedBy: ids.olivia });
    expect(await viewInvitation(t.db, inv.token, null)).toMatchObject({ kind: "open", visitor: "signed_out", accountExists: true });
    const before = await q("SELECT name, password_hash FROM users WHERE id = $1", [ids.bob]);
    expect(await acceptInvitationAsNewUser(t.db, inv.token, { name: "Not Bob", password: "olivia chose this" })).toEqual({
      outcome: { kind: "refused", reason: "account_exists", message: "An account with this email address already exists: sign in to accept the invitation." },
      session: null,
    });
    expect(await q("SELECT name, password_hash FROM users WHERE id = $1", [ids.bob])).toEqual(before);
    expect(await signIn(t.db, "bob@globex.test", "olivia chose this")).toBeNull();
    expect(await isMember(ids.acme, "bob@globex.test")).toBe(false);
    expect(await q("SELECT accepted_at FROM invitations WHERE id = $1", [inv.invitationId])).toEqual([{ accepted_at: null }]);
    await revokeInvitation(t.db, ids.acme, inv.invitationId);
  });
});

describe("through the web's database role (row-level security)", () => {
  let web: Db;
  const scopes = new AsyncLocalStorage<DbScope>();
  let session: DbScope = {};
  const orgScope: OrgScope = (orgId, work) => scopes.run({ orgIds: [orgId] }, work);
  beforeAll(() => {
    web = createDb(urlAsRole(t.adminUrl, "holdfast_web"), { poolSize: 2, scope: async () => scopes.getStore() ?? session });
  });
  afterAll(async () => web?.$disconnect());

  it("the invited user's session cannot see the invitation; its link names the organisation and the accept runs in its scope", async () => {
    const inv = await inviteMember(t.db, { orgId: ids.acme, email: "bob@globex.test", role: "viewer", invitedBy: ids.olivia });
    const s = await signIn(t.db, "bob@globex.test", pw);
    session = { sessionHash: sessionIdOf(s?.token ?? "") };
    const bob = await sessionUser(web, s?.token);
    if (!bob) throw new Error("no session");
    expect(bob.memberships.map((m) => m.orgSlug)).toEqual(["globex"]);
    // Bob's own scope sees no invitation of acme's; without the organisation's scope the accept finds nothing.
    expect(await web.$queryRawUnsafe("SELECT count(*)::int AS n FROM invitations")).toEqual([{ n: 0 }]);
    expect(await acceptInvitation(web, inv.token, bob)).toMatchObject({ kind: "refused", reason: "unknown" });
    expect(await viewInvitation(web, inv.token, bob, orgScope)).toMatchObject({ kind: "open", visitor: "invited", offer: { orgName: "Acme" } });
    expect(await acceptInvitation(web, inv.token, bob, orgScope)).toMatchObject({ kind: "accepted", role: "viewer", joined: true });
    expect((await sessionUser(web, s?.token))?.memberships.map((m) => m.orgSlug).sort()).toEqual(["acme", "globex"]);
    session = {};
  });
});
