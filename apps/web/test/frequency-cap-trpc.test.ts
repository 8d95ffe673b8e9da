import { parseGraph } from "@holdfast/core/versions";
import { sessionUser, signIn, upsertMember } from "@holdfast/core/people";
import { createTestDatabase, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCallerFactory } from "../src/server/trpc/init";
import { appRouter } from "../src/server/trpc/router";

/**
 * The frequency cap's settings through tRPC (issue 44): members read, the owner sets the organisation's cap and marks
 * an automation transactional, editors choose wait or skip; a member without the role is refused, and bad input is
 * answered with what is wrong.
 */
let t: TestDatabase;
let orgId: string;
let automationId: string;
const createCaller = createCallerFactory(appRouter);
const password = "a long enough password";
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;

async function callerFor(email: string) {
  const s = await signIn(t.db, email, password);
  return createCaller({ db: t.db, user: await sessionUser(t.db, s?.token) });
}

beforeAll(async () => {
  t = await createTestDatabase();
  const graph = parseGraph({ nodes: [{ id: "t", kind: "trigger", config: {} }, { id: "e", kind: "end" }], edges: [{ from: "t", to: "e" }] });
  const a = await publish(t.db, graph, { automation: "welcome" });
  orgId = a.orgId;
  automationId = a.automationId;
  for (const [email, role] of [["olivia@acme.test", "owner"], ["ed@acme.test", "editor"], ["vic@acme.test", "viewer"]] as const) {
    await upsertMember(t.db, { orgId, email, name: email, password, role });
  }
});
afterAll(async () => t?.drop());

describe("frequency cap settings", () => {
  it("the owner sets the cap (recorded with who and when), everyone reads it, and off clears it", async () => {
    const owner = await callerFor("olivia@acme.test");
    const vic = await callerFor("vic@acme.test");
    expect(await vic.frequencyCap.get({ orgSlug: "acme" })).toMatchObject({ cap: null });
    await owner.frequencyCap.set({ orgSlug: "acme", cap: { count: 2, periodHours: 168 } });
    await owner.frequencyCap.set({ orgSlug: "acme", cap: { count: 2, periodHours: 168 } }); // a repeated click
    const read = await vic.frequencyCap.get({ orgSlug: "acme" });
    expect(read).toMatchObject({ cap: { count: 2, periodHours: 168 }, updatedBy: "user:olivia@acme.test" });
    expect(read.updatedAt).toBeInstanceOf(Date);
    const [row] = await q("SELECT frequency_cap FROM sending_rules WHERE org_id = $1", [orgId]);
    expect(row.frequency_cap).toEqual({ count: 2, periodHours: 168 });
    await owner.frequencyCap.set({ orgSlug: "acme", cap: null });
    expect((await vic.frequencyCap.get({ orgSlug: "acme" })).cap).toBeNull();
  });

  it("a member without the role is refused and nothing changes", async () => {
    const vic = await callerFor("vic@acme.test");
    const ed = await callerFor("ed@acme.test");
    await expect(vic.frequencyCap.set({ orgSlug: "acme", cap: { count: 1, periodHours: 24 } })).rejects.toMatchObject({ code: "FORBIDDEN", message: "this needs the owner role (you are viewer)" });
    await expect(ed.frequencyCap.set({ orgSlug: "acme", cap: { count: 1, periodHours: 24 } })).rejects.toMatchObject({ code: "FORBIDDEN" });
    // Transactional takes an automation out of the owner's cap: the owner's to decide, not an editor's.
    await expect(ed.frequencyCap.setTransactional({ orgSlug: "acme", automationId, transactional: true })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(vic.frequencyCap.setCappedAction({ orgSlug: "acme", automationId, cappedAction: "skip" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    const [a] = await q("SELECT transactional, capped_action FROM automations WHERE id = $1", [automationId]);
    expect(a).toEqual({ transactional: false, capped_action: "wait" });
    expect(await q("SELECT frequency_cap FROM sending_rules WHERE org_id = $1 AND frequency_cap IS NOT NULL", [orgId])).toHaveLength(0);
  });

  it("bad input is answered with what is wrong", async () => {
    const owner = await callerFor("olivia@acme.test");
    const bad = async (cap: unknown) => (await owner.frequencyCap.set({ orgSlug: "acme", cap } as never).catch((e: { code: string; message: string }) => e)) as { code: string; message: string };
    expect(await bad({ count: 0, periodHours: 24 })).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("at least 1 email") });
    expect(await bad({ count: 101, periodHours: 24 })).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("at most 100 emails") });
    expect(await bad({ count: 1, periodHours: 721 })).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("at most 720 hours (30 days)") });
    expect(await bad({ count: 1.5, periodHours: 24 })).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("a whole number of emails") });
    expect(await bad({ count: 1, periodHours: 24, extra: true })).toMatchObject({ code: "BAD_REQUEST" });
    const action = await owner.frequencyCap.setCappedAction({ orgSlug: "acme", automationId, cappedAction: "later" as never }).catch((e: { code: string; message: string }) => e);
    expect(action).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining('"wait" or "skip"') });
  });

  it("an automation's part: the owner marks it transactional, an editor chooses skip; the page reads both with the cap", async () => {
    const owner = await callerFor("olivia@acme.test");
    const ed = await callerFor("ed@acme.test");
    await owner.frequencyCap.set({ orgSlug: "acme", cap: { count: 1, periodHours: 24 } });
    await owner.frequencyCap.setTransactional({ orgSlug: "acme", automationId, transactional: true });
    await ed.frequencyCap.setCappedAction({ orgSlug: "acme", automationId, cappedAction: "skip" });
    const vic = await callerFor("vic@acme.test");
    expect(await vic.frequencyCap.automation({ orgSlug: "acme", automationId })).toEqual({
      transactional: true,
      cappedAction: "skip",
      orgCap: { count: 1, periodHours: 24 },
      mayMarkTransactional: false,
      mayChooseAction: false,
    });
    expect(await ed.frequencyCap.automation({ orgSlug: "acme", automationId })).toMatchObject({ mayMarkTransactional: false, mayChooseAction: true });
    expect(await owner.frequencyCap.automation({ orgSlug: "acme", automationId })).toMatchObject({ mayMarkTransactional: true, mayChooseAction: true });
    await expect(owner.frequencyCap.automation({ orgSlug: "acme", automationId: `aut_${"0".repeat(32)}` })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("an editor may not publish a new journey into an automation an owner exempted; the owner may", async () => {
    const owner = await callerFor("olivia@acme.test");
    const ed = await callerFor("ed@acme.test");
    await owner.frequencyCap.setTransactional({ orgSlug: "acme", automationId, transactional: true });
    const input = { orgSlug: "acme", automationId };
    const draft = await ed.drafts.get(input);
    const graph = {
      nodes: [{ id: "t", kind: "trigger", config: {} }, { id: "w", kind: "wait", config: { rule: { kind: "duration", seconds: 60 } } }, { id: "e", kind: "end" }],
      edges: [{ from: "t", to: "w" }, { from: "w", to: "e" }],
    };
    await ed.drafts.save({ ...input, graph, baseRevision: draft.revision });
    await expect(ed.versions.publish(input)).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: "an owner marked it transactional (not capped), so only an owner may publish a new version of this automation: ask an owner to publish it, or to take that setting off first",
    });
    expect(await q("SELECT count(*)::int AS n FROM automation_versions WHERE automation_id = $1", [automationId])).toEqual([{ n: 1 }]);
    await expect(owner.versions.publish(input)).resolves.toMatchObject({ version: 2 });
    await owner.frequencyCap.setTransactional({ orgSlug: "acme", automationId, transactional: false });
  });
});
