import { createSavedEmail, parseGraph } from "@holdfast/core/versions";
import { createConnection } from "@holdfast/core/providers";
import { acceptInvitation, inviteMember, sessionUser, signIn, upsertMember, viewInvitation } from "@holdfast/core/people";
import { startRun } from "@holdfast/core/run";
import { createTestDatabase, publish, startHttpTarget, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { safeNext } from "../src/server/next-path";
import { createCallerFactory } from "../src/server/trpc/init";
import { appRouter } from "../src/server/trpc/router";

/**
 * The builder's API: every procedure is scoped by the caller's organisation. A user of another organisation can
 * neither read nor change this one's data, through its slug or through its ids; anonymous callers get nothing; a
 * viewer cannot change anything. Drafts keep their step ids through 50 saves; published versions are immutable in
 * the database itself.
 */
let t: TestDatabase;
const ids = {} as Record<"orgA" | "orgB" | "automationA" | "owner" | "viewer" | "bob" | "connectionA" | "deliveryA" | "contactA" | "invitationA" | "runA" | "savedEmailA", string>;
const createCaller = createCallerFactory(appRouter);
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;

const graph = (extra: Record<string, unknown>[] = []) =>
  parseGraph({
    nodes: [
      { id: "start", kind: "trigger", config: {} },
      { id: "call_crm", kind: "http_request", config: { url: "http://127.0.0.1:9/x" } },
      ...extra,
      { id: "done", kind: "end" },
    ],
    edges: [
      { from: "start", to: "call_crm" },
      { from: "call_crm", to: extra.length ? (extra[0]?.id as string) : "done" },
      ...(extra.length ? [{ from: extra[0]?.id as string, to: "done" }] : []),
    ],
  });

async function callerFor(email: string | null) {
  if (!email) return createCaller({ db: t.db, user: null });
  const s = await signIn(t.db, email, "a long enough password");
  return createCaller({ db: t.db, user: await sessionUser(t.db, s?.token) });
}

beforeAll(async () => {
  t = await createTestDatabase();
  const a = await publish(t.db, graph(), { automation: "nurture" });
  ids.orgA = a.orgId;
  ids.automationA = a.automationId;
  await t.sql.query("INSERT INTO organisations (slug, name) VALUES ('other', 'Other')");
  ids.orgB = (await q("SELECT id FROM organisations WHERE slug = 'other'"))[0].id;
  ids.owner = await upsertMember(t.db, { orgId: ids.orgA, email: "olivia@acme.test", name: "Olivia", password: "a long enough password", role: "owner" });
  ids.viewer = await upsertMember(t.db, { orgId: ids.orgA, email: "vic@acme.test", name: "Vic", password: "a long enough password", role: "viewer" });
  ids.bob = await upsertMember(t.db, { orgId: ids.orgB, email: "bob@other.test", name: "Bob", password: "a long enough password", role: "owner" });
  ids.connectionA = await createConnection(t.db, { orgId: ids.orgA, kind: "smtp", name: "mail", config: { host: "127.0.0.1", from: "a@acme.test" }, secret: "s3cret" });
  ids.contactA = (await q("INSERT INTO contacts (org_id, email, consent) VALUES ($1, 'maya@example.com', 'granted') RETURNING id", [ids.orgA]))[0].id;
  await q("INSERT INTO suppressions (org_id, email, reason) VALUES ($1, 'gone@example.com', 'bounced')", [ids.orgA]);
  const owner = await callerFor("olivia@acme.test");
  await owner.drafts.get({ orgSlug: "acme", automationId: ids.automationA });
  // An accepted delivery of acme's automation (its payload becomes the sample).
  const started = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "nurture",
    rawBody: "{}",
    body: { email: "maya@example.com" },
    headers: { "webhook-id": "evt_trpc", "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
    delivery: { contentType: "application/json", bodyBytes: 2 },
  });
  ids.runA = started.runId;
  ids.deliveryA = (await q("SELECT id FROM trigger_deliveries WHERE org_id = $1", [ids.orgA]))[0].id;
  ids.invitationA = (await inviteMember(t.db, { orgId: ids.orgA, email: "pending@acme.test", role: "editor", invitedBy: ids.owner })).invitationId;
  const welcome = { name: "Acme welcome", subject: "Welcome to acme", text: "Hello from acme", html: null };
  ids.savedEmailA = (await createSavedEmail(t.db, ids.orgA, welcome, "user:olivia@acme.test")).saved.id;
});
afterAll(async () => t?.drop());

/** Every procedure, called against organisation A's data. Keys are the router's procedure paths. */
const attempts = (orgSlug: string): Record<string, (c: Awaited<ReturnType<typeof callerFor>>) => Promise<unknown>> => ({
  "automations.list": (c) => c.automations.list({ orgSlug }),
  "automations.create": (c) => c.automations.create({ orgSlug, name: "Sneaky", slug: "sneaky" }),
  "automations.templateCheck": (c) => c.automations.templateCheck({ orgSlug, templateId: "welcome-series", answers: { mail: "mail", sender: "Sam", product: "Acme" } }),
  "automations.createFromTemplate": (c) =>
    c.automations.createFromTemplate({ orgSlug, templateId: "welcome-series", answers: { mail: "mail", sender: "Sam", product: "Acme" }, name: "Sneaky", slug: "sneaky-welcome" }),
  "triggers.get": (c) => c.triggers.get({ orgSlug, automationId: ids.automationA as string }),
  "triggers.setMode": (c) => c.triggers.setMode({ orgSlug, automationId: ids.automationA as string, mode: "url_token" }),
  "triggers.rotate": (c) => c.triggers.rotate({ orgSlug, automationId: ids.automationA as string, kind: "signing_secret" }),
  "triggers.revokePrevious": (c) => c.triggers.revokePrevious({ orgSlug, automationId: ids.automationA as string, kind: "url_token" }),
  "triggers.deliveries": (c) => c.triggers.deliveries({ orgSlug, automationId: ids.automationA as string }),
  "triggers.sample": (c) => c.triggers.sample({ orgSlug, automationId: ids.automationA as string }),
  "triggers.useAsSample": (c) => c.triggers.useAsSample({ orgSlug, deliveryId: ids.deliveryA as string }),
  "triggers.testRun": (c) => c.triggers.testRun({ orgSlug, automationId: ids.automationA as string }),
  "emails.summary": (c) => c.emails.summary({ orgSlug, automationId: ids.automationA as string }),
  "emails.setTrackOpens": (c) => c.emails.setTrackOpens({ orgSlug, automationId: ids.automationA as string, on: true }),
  "drafts.get": (c) => c.drafts.get({ orgSlug, automationId: ids.automationA as string }),
  "drafts.preview": (c) => c.drafts.preview({ orgSlug, automationId: ids.automationA as string, sample: { from: "contact", contactId: ids.contactA as string } }),
  "drafts.save": (c) => c.drafts.save({ orgSlug, automationId: ids.automationA as string, graph: { nodes: [], edges: [] }, baseRevision: 1 }),
  "versions.list": (c) => c.versions.list({ orgSlug, automationId: ids.automationA as string }),
  "versions.diff": (c) => c.versions.diff({ orgSlug, automationId: ids.automationA as string, from: 1, to: 1 }),
  "counts.journey": (c) => c.counts.journey({ orgSlug, automationId: ids.automationA as string, version: null, window: "all" }),
  "versions.publish": (c) => c.versions.publish({ orgSlug, automationId: ids.automationA as string }),
  "migrations.plan": (c) => c.migrations.plan({ orgSlug, automationId: ids.automationA as string, migration: { fromVersion: 1, toVersion: 2 } }),
  "migrations.run": (c) => c.migrations.run({ orgSlug, automationId: ids.automationA as string, migration: { fromVersion: 1, toVersion: 2 } }),
  "migrations.list": (c) => c.migrations.list({ orgSlug, automationId: ids.automationA as string }),
  "connections.list": (c) => c.connections.list({ orgSlug }),
  "connections.create": (c) => c.connections.create({ orgSlug, kind: "smtp", name: "sneaky", config: {} }),
  "connections.update": (c) => c.connections.update({ orgSlug, connectionId: ids.connectionA as string, name: "renamed", secret: "stolen" }),
  "connections.delete": (c) => c.connections.delete({ orgSlug, connectionId: ids.connectionA as string }),
  "connections.test": (c) => c.connections.test({ orgSlug, connectionId: ids.connectionA as string }),
  "contacts.list": (c) => c.contacts.list({ orgSlug, query: "" }),
  "contacts.upsert": (c) => c.contacts.upsert({ orgSlug, email: "maya@example.com", timeZone: null, consent: "withdrawn" }),
  "suppressions.list": (c) => c.suppressions.list({ orgSlug }),
  "suppressions.add": (c) => c.suppressions.add({ orgSlug, email: "x@example.com", reason: "x" }),
  "suppressions.remove": (c) => c.suppressions.remove({ orgSlug, email: "gone@example.com" }),
  "members.list": (c) => c.members.list({ orgSlug }),
  "members.invite": (c) => c.members.invite({ orgSlug, email: "mallory@evil.test", role: "owner" }),
  "members.invitations": (c) => c.members.invitations({ orgSlug }),
  "members.revokeInvitation": (c) => c.members.revokeInvitation({ orgSlug, invitationId: ids.invitationA as string }),
  "members.setRole": (c) => c.members.setRole({ orgSlug, userId: ids.viewer as string, role: "owner" }),
  "members.setSlackUser": (c) => c.members.setSlackUser({ orgSlug, userId: ids.viewer as string, slackUserId: "U0STOLEN" }),
  "members.remove": (c) => c.members.remove({ orgSlug, userId: ids.viewer as string }),
  "kinds.previewWait": (c) => c.kinds.previewWait({ orgSlug, rule: { kind: "next_weekday", at: "09:00" }, zone: "Europe/Berlin" }),
  "quietHours.org": (c) => c.quietHours.org({ orgSlug }),
  "quietHours.setOrg": (c) => c.quietHours.setOrg({ orgSlug, window: null }),
  "quietHours.preview": (c) => c.quietHours.preview({ orgSlug, window: null }),
  "quietHours.automation": (c) => c.quietHours.automation({ orgSlug, automationId: ids.automationA as string }),
  "quietHours.setAutomation": (c) => c.quietHours.setAutomation({ orgSlug, automationId: ids.automationA as string, override: { off: true } }),
  "budgets.model": (c) => c.budgets.model({ orgSlug }),
  "budgets.setModel": (c) => c.budgets.setModel({ orgSlug, usd: 1_000 }),
  "budgets.runs": (c) => c.budgets.runs({ orgSlug }),
  "budgets.setRuns": (c) => c.budgets.setRuns({ orgSlug, automationSlug: "nurture", maxSteps: 1, maxAgeSeconds: 60 }),
  "connectionLimits.list": (c) => c.connectionLimits.list({ orgSlug }),
  "connectionLimits.set": (c) => c.connectionLimits.set({ orgSlug, connectionId: ids.connectionA as string, maxConcurrent: 1, breaker: {} }),
  "contactView.get": (c) => c.contactView.get({ orgSlug, contactId: ids.contactA as string }),
  "contactView.setZone": (c) => c.contactView.setZone({ orgSlug, contactId: ids.contactA as string, zone: "Asia/Tokyo" }),
  "contactView.setAttributes": (c) => c.contactView.setAttributes({ orgSlug, contactId: ids.contactA as string, attributes: { name: "Mallory", company: "Evil Corp" } }),
  "contactView.eraseCount": (c) => c.contactView.eraseCount({ orgSlug, contactId: ids.contactA as string }),
  "contactView.erase": (c) => c.contactView.erase({ orgSlug, contactId: ids.contactA as string, confirmRunning: 1 }),
  "goals.get": (c) => c.goals.get({ orgSlug, automationId: ids.automationA as string }),
  "goals.set": (c) => c.goals.set({ orgSlug, automationId: ids.automationA as string, goal: "event" }),
  "goals.rotate": (c) => c.goals.rotate({ orgSlug, automationId: ids.automationA as string, kind: "signing_secret" }),
  "goals.revokePrevious": (c) => c.goals.revokePrevious({ orgSlug, automationId: ids.automationA as string, kind: "signing_secret" }),
  "frequencyCap.get": (c) => c.frequencyCap.get({ orgSlug }),
  "frequencyCap.set": (c) => c.frequencyCap.set({ orgSlug, cap: { count: 1, periodHours: 24 } }),
  "frequencyCap.automation": (c) => c.frequencyCap.automation({ orgSlug, automationId: ids.automationA as string }),
  "frequencyCap.setTransactional": (c) => c.frequencyCap.setTransactional({ orgSlug, automationId: ids.automationA as string, transactional: true }),
  "frequencyCap.setCappedAction": (c) => c.frequencyCap.setCappedAction({ orgSlug, automationId: ids.automationA as string, cappedAction: "skip" }),
  "lifecycle.statuses": (c) => c.lifecycle.statuses({ orgSlug }),
  "lifecycle.get": (c) => c.lifecycle.get({ orgSlug, automationId: ids.automationA as string }),
  "lifecycle.change": (c) => c.lifecycle.change({ orgSlug, automationId: ids.automationA as string, change: { action: "archive" } }),
  "lifecycle.countRuns": (c) => c.lifecycle.countRuns({ orgSlug, automationId: ids.automationA as string }),
  "lifecycle.stopRuns": (c) => c.lifecycle.stopRuns({ orgSlug, automationId: ids.automationA as string, reason: "stolen", confirmCount: 100 }),
  "runs.fireWait": (c) => c.runs.fireWait({ orgSlug, runId: ids.runA as string, reason: "stolen" }),
  "testRuns.state": (c) => c.testRuns.state({ orgSlug, runId: ids.runA as string }),
  "testRuns.skip": (c) => c.testRuns.skip({ orgSlug, runId: ids.runA as string, stepId: `stp_${"0".repeat(32)}` }),
  "testRuns.decide": (c) =>
    c.testRuns.decide({ orgSlug, runId: ids.runA as string, approvalId: `apr_${"0".repeat(32)}`, decision: "approved", asUserId: ids.owner as string }),
  "testRuns.reply": (c) => c.testRuns.reply({ orgSlug, runId: ids.runA as string, stepId: `stp_${"0".repeat(32)}`, text: "yes" }),
  "testRuns.play": (c) => c.testRuns.play({ orgSlug, runId: ids.runA as string }),
  "savedEmails.list": (c) => c.savedEmails.list({ orgSlug }),
  "savedEmails.get": (c) => c.savedEmails.get({ orgSlug, savedEmailId: ids.savedEmailA as string }),
  "savedEmails.create": (c) => c.savedEmails.create({ orgSlug, name: "Planted", subject: "Planted", text: "x", html: null }),
  "savedEmails.update": (c) =>
    c.savedEmails.update({ orgSlug, savedEmailId: ids.savedEmailA as string, readAt: new Date(), content: { name: "Stolen", subject: "Stolen", text: "x", html: null } }),
  "savedEmails.remove": (c) => c.savedEmails.remove({ orgSlug, savedEmailId: ids.savedEmailA as string }),
});

/** Organisation A's data, as it stands. */
const snapshot = async () =>
  q(
    `SELECT (SELECT count(*) FROM automations WHERE org_id = $1) AS a,
            (SELECT md5(string_agg(graph::text || revision, '')) FROM automation_drafts WHERE org_id = $1) AS d,
            (SELECT count(*) FROM automation_versions WHERE org_id = $1) AS v,
            (SELECT md5(string_agg(secret || status, '')) FROM connections WHERE org_id = $1) AS c,
            (SELECT md5(string_agg(email || consent || COALESCE(time_zone, '-') || attributes::text, '')) FROM contacts WHERE org_id = $1) AS ct,
            (SELECT md5(string_agg(allowed_micros::text, '')) FROM org_budgets WHERE org_id = $1) AS mb,
            (SELECT md5(string_agg(COALESCE(run_max_steps::text, '-') || COALESCE(run_max_age_seconds::text, '-'), '' ORDER BY id)) FROM automations WHERE org_id = $1) AS rb,
            (SELECT md5(string_agg(limits::text, '' ORDER BY id)) FROM connections WHERE org_id = $1) AS cl,
            (SELECT count(*) FROM suppressions WHERE org_id = $1) AS s,
            (SELECT md5(string_agg(frequency_cap::text, '')) FROM sending_rules WHERE org_id = $1) AS fc,
            (SELECT md5(string_agg(transactional::text || capped_action, '' ORDER BY id)) FROM automations WHERE org_id = $1) AS fca,
            (SELECT md5(string_agg(user_id || role || COALESCE(slack_user_id, '-'), '' ORDER BY user_id)) FROM memberships WHERE org_id = $1) AS m,
            (SELECT md5(string_agg(email || role || token_hash || COALESCE(revoked_at::text, '-'), '' ORDER BY id)) FROM invitations WHERE org_id = $1) AS inv,
            (SELECT count(*) FROM run_migrations WHERE org_id = $1) AS mg,
            (SELECT md5(string_agg(trigger_auth, '')) FROM automations WHERE org_id = $1) AS ta,
            (SELECT md5(string_agg(secret || COALESCE(expires_at::text, '-'), '' ORDER BY id)) FROM trigger_credentials WHERE org_id = $1) AS tc,
            (SELECT md5(string_agg(COALESCE(sample_input::text, '-'), '' ORDER BY id)) FROM automations WHERE org_id = $1) AS sa,
            (SELECT md5(string_agg(status, '' ORDER BY id)) FROM automations WHERE org_id = $1) AS ls,
            (SELECT count(*) FROM runs WHERE org_id = $1 AND status = 'cancelled') AS rc,
            (SELECT count(*) FROM runs WHERE org_id = $1) AS r,
            (SELECT md5(COALESCE(string_agg(COALESCE(quiet_hours::text, '-'), '' ORDER BY id), '') || COALESCE((SELECT quiet_hours::text FROM sending_rules WHERE org_id = $1), '-')) FROM automations WHERE org_id = $1) AS qh,
            (SELECT md5(string_agg(name || subject || text, '' ORDER BY id)) FROM email_templates WHERE org_id = $1) AS et`,
    [ids.orgA],
  );

describe("organisation scoping", () => {
  it("the test covers every procedure of the router", () => {
    const paths = Object.keys((appRouter as unknown as { _def: { procedures: Record<string, unknown> } })._def.procedures).sort();
    expect(Object.keys(attempts("x")).sort()).toEqual(paths);
  });

  it("a user of another organisation gets NOT_FOUND from every procedure, by slug or by id, and changes nothing", async () => {
    const bob = await callerFor("bob@other.test");
    const before = await snapshot();
    for (const [path, call] of Object.entries(attempts("acme"))) {
      await expect(call(bob), `${path} via acme's slug`).rejects.toMatchObject({ code: "NOT_FOUND" });
    }
    // Through his own organisation's slug with acme's ids: nothing of acme's is found or touched.
    for (const [path, call] of Object.entries(attempts("other"))) {
      const out = await call(bob).catch((e: { code: string }) => e);
      const leaked = JSON.stringify(out ?? null);
      expect(leaked, path).not.toMatch(/nurture|Acme welcome|Hello from acme|maya@example\.com|gone@example\.com|olivia@acme|pending@acme|s3cret|call_crm|whsec_/);
    }
    expect(await snapshot()).toEqual(before);
  });

  it("an owner inviting an existing user of another organisation learns nothing of the account and adds nobody until they accept", async () => {
    const bob = await callerFor("bob@other.test");
    // Before (members.add): Olivia of acme became a member of "other" at once, the answer said `created: false` (her
    // account exists) and the list showed her name. Now the answer for her address and a new one differ in nothing.
    // This deployment has no system mailbox: the owner is given the link (invite-email.test.ts: the emailed path).
    const invite = async (email: string) => {
      const a = await bob.members.invite({ orgSlug: "other", email, role: "viewer" });
      if (a.delivery !== "link") throw new Error("expected a link");
      return a;
    };
    const forOlivia = await invite("Olivia@Acme.test");
    const forNew = await invite("newcomer@nowhere.test");
    const shape = (a: typeof forOlivia) => ({
      keys: Object.keys(a).sort(),
      link: a.link.replace(/^https?:\/\/[^/]+/, "").replace(/[A-Za-z0-9_-]{43}$/, "<token>"),
      days: Math.round((a.expiresAt.getTime() - Date.now()) / 86_400_000),
      sentTo: a.sentTo.replace(/^[^@]+/, "<typed>"),
    });
    expect(shape(forOlivia)).toEqual({ keys: ["delivery", "expiresAt", "invitationId", "link", "sentTo"], link: "/invite/<token>", days: 7, sentTo: "<typed>@Acme.test" });
    expect(shape(forNew)).toEqual({ ...shape(forOlivia), sentTo: "<typed>@nowhere.test" });
    expect(JSON.stringify(forOlivia)).not.toMatch(/Olivia"|usr_|created/);
    const listed = async () => (await bob.members.list({ orgSlug: "other" })).map((m) => m.email);
    expect(await listed()).toEqual(["bob@other.test"]);
    expect(await q("SELECT count(*)::int AS n FROM memberships WHERE org_id = $1 AND user_id = $2", [ids.orgB, ids.owner])).toEqual([{ n: 0 }]);
    // Pending apart, as typed; a second click renews the same invitation. (mallory@evil.test: the scoping test's.)
    await bob.members.invite({ orgSlug: "other", email: "Olivia@Acme.test", role: "viewer" });
    const pending = async () => (await bob.members.invitations({ orgSlug: "other" })).filter((i) => i.email !== "mallory@evil.test");
    expect((await pending()).map((i) => [i.email, i.role, i.expired]).sort()).toEqual([
      ["Olivia@Acme.test", "viewer", false],
      ["newcomer@nowhere.test", "viewer", false],
    ]);
    // Her password and name are hers.
    expect(await signIn(t.db, "olivia@acme.test", "a long enough password")).not.toBeNull();
    expect(await q("SELECT name FROM users WHERE email = 'olivia@acme.test'")).toEqual([{ name: "Olivia" }]);

    // She accepts with her own session, the newest link: a member now, listed; a second accept changes nothing.
    const renewed = await invite("Olivia@Acme.test");
    const token = renewed.link.slice(renewed.link.lastIndexOf("/") + 1);
    const olivia = await sessionUser(t.db, (await signIn(t.db, "olivia@acme.test", "a long enough password"))?.token);
    if (!olivia) throw new Error("no session");
    expect(await acceptInvitation(t.db, forOlivia.link.slice(forOlivia.link.lastIndexOf("/") + 1), olivia)).toMatchObject({ kind: "refused", reason: "unknown" });
    expect(await acceptInvitation(t.db, token, olivia)).toMatchObject({ kind: "accepted", orgName: "Other", role: "viewer", joined: true });
    expect(await acceptInvitation(t.db, token, olivia)).toMatchObject({ kind: "accepted", again: true });
    expect((await listed()).sort()).toEqual(["bob@other.test", "olivia@acme.test"]);
    expect((await pending()).map((i) => i.email)).toEqual(["newcomer@nowhere.test"]);

    // Revoked: the link says so; revoking again is NOT_FOUND in words.
    const newcomer = (await pending())[0];
    await bob.members.revokeInvitation({ orgSlug: "other", invitationId: newcomer?.id as string });
    expect(await viewInvitation(t.db, forNew.link.slice(forNew.link.lastIndexOf("/") + 1), null)).toMatchObject({ kind: "refused", reason: "revoked" });
    await expect(bob.members.revokeInvitation({ orgSlug: "other", invitationId: newcomer?.id as string })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: "that invitation is no longer pending",
    });
    // A member's address is a sentence, not a second invitation.
    await expect(bob.members.invite({ orgSlug: "other", email: "olivia@acme.test", role: "owner" })).rejects.toMatchObject({
      code: "CONFLICT",
      message: "olivia@acme.test is already a member of this organisation: change their role in the list instead",
    });
    // The last owner stays.
    await expect(bob.members.setRole({ orgSlug: "other", userId: ids.bob, role: "viewer" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: "the organisation needs at least one owner: make someone else an owner first",
    });
    // Someone who is not a member of this organisation is not found, whatever they are elsewhere.
    await expect(bob.members.setRole({ orgSlug: "other", userId: ids.viewer as string, role: "editor" })).rejects.toMatchObject({ code: "NOT_FOUND", message: "member not found" });
    expect(await q("SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2", [ids.orgB, ids.bob])).toEqual([{ role: "owner" }]);
    await q("DELETE FROM memberships WHERE org_id = $1 AND user_id = $2", [ids.orgB, ids.owner]);
  });

  it("a journey's counts for a version past what a version number can be: refused as input (BAD_REQUEST), not a database error", async () => {
    const vic = await callerFor("vic@acme.test");
    for (const version of [2_147_483_648, 1e300]) {
      await expect(vic.counts.journey({ orgSlug: "acme", automationId: ids.automationA as string, version, window: "7d" }), String(version)).rejects.toMatchObject({ code: "BAD_REQUEST" });
    }
    expect(await vic.counts.journey({ orgSlug: "acme", automationId: ids.automationA as string, version: 1, window: "7d" })).toMatchObject({ published: true, version: 1 });
  });

  it("anonymous callers get UNAUTHORIZED; a viewer may read and not change", async () => {
    const anon = await callerFor(null);
    for (const [path, call] of Object.entries(attempts("acme"))) await expect(call(anon), path).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    const vic = await callerFor("vic@acme.test");
    expect(await vic.automations.list({ orgSlug: "acme" })).toHaveLength(1);
    for (const path of ["automations.create", "automations.templateCheck", "automations.createFromTemplate", "triggers.setMode", "triggers.rotate", "triggers.revokePrevious", "triggers.useAsSample", "triggers.testRun", "emails.setTrackOpens", "drafts.save", "versions.publish", "connections.update", "connections.delete", "connections.test", "members.setRole", "members.invite", "members.invitations", "members.revokeInvitation", "budgets.setModel", "budgets.setRuns", "connectionLimits.set", "contactView.setZone", "contactView.setAttributes", "contactView.eraseCount", "contactView.erase", "lifecycle.change", "lifecycle.stopRuns", "goals.set", "goals.rotate", "goals.revokePrevious", "runs.fireWait", "testRuns.skip", "testRuns.decide", "testRuns.reply", "testRuns.play", "quietHours.setOrg", "quietHours.setAutomation", "frequencyCap.set", "frequencyCap.setTransactional", "frequencyCap.setCappedAction", "savedEmails.create", "savedEmails.update", "savedEmails.remove"]) {
      await expect(attempts("acme")[path]?.(vic), path).rejects.toMatchObject({ code: "FORBIDDEN" });
    }
    expect((await vic.connections.list({ orgSlug: "acme" }))[0]).not.toHaveProperty("secret");
    // A duplicate name is a sentence, not a database error.
    const owner = await callerFor("olivia@acme.test");
    await expect(owner.connections.create({ orgSlug: "acme", kind: "smtp", name: "mail", config: { host: "smtp.example.com", from: "a@acme.test" } })).rejects.toMatchObject({
      code: "CONFLICT",
      message: 'a connection named "mail" already exists in this organisation; pick another name or edit that one',
    });
    // The trigger's credential is for owners and editors: a viewer sees the mode and the base URL only.
    const forVic = await vic.triggers.get({ orgSlug: "acme", automationId: ids.automationA as string });
    expect(forVic.credential).toBeNull();
    expect(JSON.stringify(forVic)).not.toMatch(/whsec_/);
    const olivia = await callerFor("olivia@acme.test");
    const forOlivia = await olivia.triggers.get({ orgSlug: "acme", automationId: ids.automationA as string });
    expect(forOlivia.credential?.signingSecret).toMatch(/^whsec_/);
    expect(forOlivia.url).toMatch(/\/api\/hooks\/acme\/nurture$/);
    await olivia.triggers.setMode({ orgSlug: "acme", automationId: ids.automationA as string, mode: "url_token" });
    const tokenMode = await olivia.triggers.get({ orgSlug: "acme", automationId: ids.automationA as string });
    expect(tokenMode.url).toBe(`${forOlivia.url}/${forOlivia.credential?.urlToken}`);
    await olivia.triggers.rotate({ orgSlug: "acme", automationId: ids.automationA as string, kind: "url_token" });
    const rotated = await olivia.triggers.get({ orgSlug: "acme", automationId: ids.automationA as string });
    expect(rotated.credential?.urlToken).not.toBe(forOlivia.credential?.urlToken);
    expect(rotated.credential?.previous).toEqual([{ kind: "url_token", expiresAt: expect.any(Date) }]);
    expect(await olivia.triggers.revokePrevious({ orgSlug: "acme", automationId: ids.automationA as string, kind: "url_token" })).toEqual({ revoked: 1 });
    expect((await olivia.triggers.get({ orgSlug: "acme", automationId: ids.automationA as string })).credential?.previous).toEqual([]);
    await olivia.triggers.setMode({ orgSlug: "acme", automationId: ids.automationA as string, mode: "signed" });
  });
});

describe("the path after signing in", () => {
  it("only ever leads into this site", () => {
    expect(safeNext("/runs/run_1?x=1")).toBe("/runs/run_1?x=1");
    for (const bad of ["//evil.com", "/\\evil.com", "/\t/evil.com", "/\n/evil.com", "https://evil.com", "", 42]) expect(safeNext(bad)).toBe("/approvals");
  });
});

describe("drafts and versions", () => {
  it("50 saves with edits never change a step id; a stale save is refused; publish makes v2; published rows refuse UPDATE and DELETE", async () => {
    const olivia = await callerFor("olivia@acme.test");
    const input = { orgSlug: "acme", automationId: ids.automationA as string };
    let draft = await olivia.drafts.get(input);
    const original = (draft.graph as { nodes: { id: string }[] }).nodes.map((n) => n.id);
    for (let i = 0; i < 50; i++) {
      const g = structuredClone(draft.graph) as { nodes: { id: string; kind: string; config: Record<string, unknown>; position?: unknown }[]; edges: { from: string; to: string }[] };
      for (const n of g.nodes) n.position = { x: i * 10, y: i };
      const call = g.nodes.find((n) => n.id === "call_crm");
      if (call) call.config = { ...call.config, timeoutMs: 1000 + i };
      if (i === 10) {
        g.nodes.splice(2, 0, { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: 60 } } });
        g.edges = [
          { from: "start", to: "call_crm" },
          { from: "call_crm", to: "pause" },
          { from: "pause", to: "done" },
        ];
      }
      draft = await olivia.drafts.save({ ...input, graph: g, baseRevision: draft.revision });
      const now = (draft.graph as { nodes: { id: string }[] }).nodes.map((n) => n.id);
      expect(now.filter((id) => original.includes(id))).toEqual(original);
    }
    expect(draft.revision).toBe(51);
    expect((draft.graph as { nodes: { id: string }[] }).nodes.map((n) => n.id)).toEqual(["start", "call_crm", "pause", "done"]);
    await expect(olivia.drafts.save({ ...input, graph: draft.graph, baseRevision: 3 })).rejects.toMatchObject({ code: "CONFLICT" });
    expect(draft.problems).toEqual([]);
    expect(draft.publishedIds).toEqual(["call_crm", "done", "start"]);

    // Two Publish clicks at once: one version, and both read it back (the second says it already was).
    const [first, second] = await Promise.all([olivia.versions.publish(input), olivia.versions.publish(input)]);
    const v2 = first.alreadyPublished ? second : first;
    expect(v2).toMatchObject({ version: 2, publishedBy: "user:olivia@acme.test", alreadyPublished: false });
    expect(first.alreadyPublished ? first : second).toMatchObject({ version: 2, versionId: v2.versionId, alreadyPublished: true });
    expect(await olivia.versions.publish(input)).toMatchObject({ version: 2, alreadyPublished: true }); // nothing changed
    expect(await q("SELECT count(*)::int AS n FROM automation_versions WHERE automation_id = $1", [ids.automationA])).toEqual([{ n: 2 }]);
    const diff = await olivia.versions.diff({ ...input, from: 1, to: 2 });
    expect(diff.added).toEqual([{ id: "pause", kind: "wait" }]);
    expect(diff.changed.map((c) => c.fields.map((f) => f.field))).toEqual([["config.timeoutMs"]]);
    await expect(t.sql.query("UPDATE automation_versions SET graph = '{}' WHERE id = $1", [v2.versionId])).rejects.toThrow(/immutable/);
    await expect(t.sql.query("DELETE FROM automation_versions WHERE id = $1", [v2.versionId])).rejects.toThrow(/immutable/);

    // An invalid draft saves (nothing typed is lost) but does not publish; its problems name the node.
    const broken = structuredClone(draft.graph) as { edges: unknown[] };
    broken.edges = broken.edges.slice(0, 1);
    draft = await olivia.drafts.save({ ...input, graph: broken, baseRevision: draft.revision });
    expect(draft.problems.map((p) => p.path)).toContain("node:call_crm");
    await expect(olivia.versions.publish(input)).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});

describe("drafts.preview", () => {
  it("says what each step would do for a stored, typed or Settings sample, calling nothing and writing nothing", async () => {
    const smtp = await startSmtpTarget();
    const http = await startHttpTarget();
    try {
      const olivia = await callerFor("olivia@acme.test");
      const vic = await callerFor("vic@acme.test");
      await olivia.connections.create({ orgSlug: "acme", kind: "smtp", name: "sink", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "team@acme.test" } });
      const edited = {
        nodes: [
          { id: "start", kind: "trigger", config: {} },
          { id: "hook", kind: "http_request", config: { url: `${http.url}/hook`, sendInput: true } },
          { id: "hello", kind: "send_email", config: { connection: "sink", subject: "Hi {{input.first_name}} at {{input.company}}", text: "Dear {{input.first_name}}" } },
          { id: "done", kind: "end" },
        ],
        edges: [
          { from: "start", to: "hook" },
          { from: "hook", to: "hello" },
          { from: "hello", to: "done" },
        ],
      };
      const input = { orgSlug: "acme", automationId: ids.automationA as string, graph: edited };
      const before = await snapshot();
      const runs = await q("SELECT count(*)::int AS n FROM steps");

      // Typed in, by a viewer: the email rendered, the missing company named.
      const typed = await vic.drafts.preview({ ...input, sample: { from: "typed", json: '{"email": "ann@example.com", "first_name": "Ann"}' } });
      if (!typed.ok) throw new Error(typed.problems.join(" "));
      const hello = typed.preview.steps.find((st) => st.nodeId === "hello");
      expect(hello?.detail).toMatchObject({ kind: "send_email", email: { to: "ann@example.com", subject: "Hi Ann at {{input.company}}", text: "Dear Ann" } });
      expect(typed.preview.missing.map((m) => m.words)).toEqual(["{{input.company}} is empty in this sample"]);
      expect(typed.preview.steps.find((st) => st.nodeId === "hook")?.detail).toMatchObject({
        request: { method: "POST", url: `${http.url}/hook`, body: { input: { email: "ann@example.com", first_name: "Ann" }, body: null } },
      });

      // A contact of Settings: its address and consent; the stored sample as the payload.
      const maya = await olivia.drafts.preview({ ...input, sample: { from: "contact", contactId: ids.contactA as string } });
      expect(maya.ok && maya.preview.steps[0]?.detail).toEqual({ kind: "trigger", contact: { email: "maya@example.com", timeZone: null, consent: "granted" } });
      expect(maya.sampleWords).toMatch(/^maya@example\.com/);
      // The stored sample, and the saved draft when no graph is sent.
      expect((await olivia.drafts.preview({ ...input, sample: { from: "stored" } })).ok).toBe(true);
      expect((await olivia.drafts.preview({ orgSlug: "acme", automationId: ids.automationA as string, sample: { from: "stored" } })).ok).toBe(true);

      // Samples refused in words: not JSON, too deep, not an object; a draft not set up says so instead of a preview.
      await expect(vic.drafts.preview({ ...input, sample: { from: "typed", json: "{email: ann}" } })).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/^The sample is not valid JSON/) });
      await expect(vic.drafts.preview({ ...input, sample: { from: "typed", json: `${"[".repeat(20)}${"]".repeat(20)}` } })).rejects.toMatchObject({ message: expect.stringMatching(/^The sample is too big: it is nested more than 16 levels deep/) });
      await expect(vic.drafts.preview({ ...input, sample: { from: "typed", json: "[1]" } })).rejects.toMatchObject({ message: expect.stringMatching(/must be a JSON object/) });
      const broken = await vic.drafts.preview({ ...input, graph: { nodes: [{ id: "start", kind: "trigger" }, { id: "x", kind: "send_email", config: {} }], edges: [] }, sample: { from: "typed", json: "{}" } });
      expect(broken).toMatchObject({ ok: false, problems: [expect.stringMatching(/not set up yet/), expect.any(String)] });

      // Nothing reached the outside world, and nothing was written.
      await new Promise((r) => setTimeout(r, 200));
      expect(smtp.received).toEqual([]);
      expect(http.calls.size).toBe(0);
      expect(await q("SELECT count(*)::int AS n FROM steps")).toEqual(runs);
      expect(await snapshot()).toEqual(before);
    } finally {
      await smtp.close();
      await http.close();
    }
  });
});
