import { sessionUser, signIn, upsertMember } from "@holdfast/core/people";
import { createTestDatabase, httpChainGraph, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCallerFactory } from "../src/server/trpc/init";
import { appRouter } from "../src/server/trpc/router";

/**
 * Who may change a contact's consent and time zone, the same through every procedure that can (contacts.upsert,
 * contactView.setZone): owners may change both; editors add contacts and may record or withdraw consent, but may
 * neither give back consent the person withdrew nor move an existing contact to another zone. A refusal is
 * FORBIDDEN, in words, and changes nothing.
 */
let t: TestDatabase;
let orgId = "";
const createCaller = createCallerFactory(appRouter);
const orgSlug = "acme";
const regrant = "This contact withdrew their consent: only an owner can record it as given again (it needs proof the person agreed again).";
const rezone = "Only an owner can change the time zone of an existing contact: it moves the times of their waiting runs.";

async function callerFor(email: string) {
  const s = await signIn(t.db, email, "a long enough password");
  return createCaller({ db: t.db, user: await sessionUser(t.db, s?.token) });
}
const contact = async (email: string) =>
  (await t.sql.query("SELECT id, consent, time_zone AS zone, consent_changed_at AS at, updated_at AS up FROM contacts WHERE org_id = $1 AND email = $2", [orgId, email])).rows[0];
const addContact = async (email: string, consent: string, zone: string | null) =>
  (await t.sql.query("INSERT INTO contacts (org_id, email, consent, time_zone, consent_changed_at) VALUES ($1, $2, $3, $4, now() - interval '1 day') RETURNING id", [orgId, email, consent, zone]))
    .rows[0].id as string;

beforeAll(async () => {
  t = await createTestDatabase();
  orgId = (await publish(t.db, httpChainGraph("https://crm.example.com/a", 1), { automation: "nurture" })).orgId;
  await upsertMember(t.db, { orgId, email: "olivia@acme.test", name: "Olivia", password: "a long enough password", role: "owner" });
  await upsertMember(t.db, { orgId, email: "eddie@acme.test", name: "Eddie", password: "a long enough password", role: "editor" });
});
afterAll(async () => t?.drop());

describe("an editor", () => {
  it("cannot give back consent a contact withdrew (to granted or to unknown): FORBIDDEN, nothing changes", async () => {
    const eddie = await callerFor("eddie@acme.test");
    await addContact("gone@example.com", "withdrawn", "Europe/Berlin");
    const before = await contact("gone@example.com");
    for (const consent of ["granted", "unknown"] as const) {
      await expect(eddie.contacts.upsert({ orgSlug, email: "gone@example.com", timeZone: null, consent })).rejects.toMatchObject({ code: "FORBIDDEN", message: regrant });
    }
    expect(await contact("gone@example.com")).toEqual(before);
  });

  it("cannot move an existing contact to another zone, through contacts.upsert or contactView.setZone: FORBIDDEN, nothing changes", async () => {
    const eddie = await callerFor("eddie@acme.test");
    const id = await addContact("maya@example.com", "granted", "Europe/Berlin");
    const before = await contact("maya@example.com");
    // Not even the consent part of the same request is written.
    await expect(eddie.contacts.upsert({ orgSlug, email: "maya@example.com", timeZone: "Asia/Tokyo", consent: "withdrawn" })).rejects.toMatchObject({ code: "FORBIDDEN", message: rezone });
    await expect(eddie.contactView.setZone({ orgSlug, contactId: id, zone: "Asia/Tokyo" })).rejects.toMatchObject({ code: "FORBIDDEN", message: rezone });
    await expect(eddie.contactView.setZone({ orgSlug, contactId: id, zone: "" })).rejects.toMatchObject({ code: "FORBIDDEN", message: rezone });
    expect(await contact("maya@example.com")).toEqual(before);
  });

  it("adds contacts with their zone and consent, records or withdraws consent, and may repeat the zone a contact has", async () => {
    const eddie = await callerFor("eddie@acme.test");
    await eddie.contacts.upsert({ orgSlug, email: "new@example.com", timeZone: "America/New_York", consent: "granted" });
    expect(await contact("new@example.com")).toMatchObject({ consent: "granted", zone: "America/New_York" });
    await addContact("lena@example.com", "unknown", "Europe/Berlin");
    await eddie.contacts.upsert({ orgSlug, email: "lena@example.com", timeZone: "Europe/Berlin", consent: "granted" });
    expect(await contact("lena@example.com")).toMatchObject({ consent: "granted", zone: "Europe/Berlin" });
    await eddie.contacts.upsert({ orgSlug, email: "lena@example.com", timeZone: null, consent: "withdrawn" });
    expect(await contact("lena@example.com")).toMatchObject({ consent: "withdrawn", zone: "Europe/Berlin" });
  });
});

describe("an owner", () => {
  it("may give back withdrawn consent and change a contact's zone, through either procedure", async () => {
    const olivia = await callerFor("olivia@acme.test");
    const id = await addContact("back@example.com", "withdrawn", "Europe/Berlin");
    await olivia.contacts.upsert({ orgSlug, email: "back@example.com", timeZone: "Asia/Tokyo", consent: "granted" });
    expect(await contact("back@example.com")).toMatchObject({ consent: "granted", zone: "Asia/Tokyo" });
    expect(await olivia.contactView.setZone({ orgSlug, contactId: id, zone: "Europe/Lisbon" })).toMatchObject({ changed: true, oldZone: "Asia/Tokyo", zone: "Europe/Lisbon" });
    expect(await contact("back@example.com")).toMatchObject({ zone: "Europe/Lisbon" });
  });
});
