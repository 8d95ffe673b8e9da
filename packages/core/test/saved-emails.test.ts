import { createDb, type Db, type DbScope, urlAsRole } from "@holdfast/db";
import { createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkEmailTemplate } from "../src/versions/email-templates/check";
import {
  createSavedEmail,
  deleteSavedEmail,
  getSavedEmail,
  listSavedEmails,
  SavedEmailChangedError,
  SavedEmailExistsError,
  SavedEmailInvalidError,
  SavedEmailNotFoundError,
  updateSavedEmail,
} from "../src/versions/email-templates/saved-emails";
import { sendEmailConfig } from "../src/versions/kinds/send_email";

/**
 * Saved emails (issue 44): each organisation's own, names unique per organisation whatever their case and said so in
 * words, a repeated save harmless, and the variables checked before any automation uses one.
 */
let t: TestDatabase;
const ids = { acme: "", globex: "" };
const welcome = { name: "Welcome 1", subject: "Welcome, {{contact.name}}", text: "Hello {{contact.name}},\n\n{{steps.draft.output.text}}", html: null };

beforeAll(async () => {
  t = await createTestDatabase();
  const org = async (slug: string) => (await t.sql.query<{ id: string }>("INSERT INTO organisations (slug, name) VALUES ($1, $1) RETURNING id", [slug])).rows[0]?.id as string;
  ids.acme = await org("acme");
  ids.globex = await org("globex");
});
afterAll(async () => t?.drop());

describe("the variables a saved email uses, checked", () => {
  it("lists each variable once and says which step a steps.* variable needs, without refusing it", () => {
    const c = checkEmailTemplate({ subject: "Hi {{contact.name}}", text: "{{contact.name}}: {{steps.draft.output.text}} {{input.offer}}", html: null });
    expect(c.errors).toEqual([]);
    expect(c.variables).toEqual([
      { path: "contact.name", needsStep: null },
      { path: "steps.draft.output.text", needsStep: "draft" },
      { path: "input.offer", needsStep: null },
    ]);
    expect(c.notes).toEqual(['Needs a step named "draft" before the send step (for {{steps.draft.output.text}}).']);
  });

  it("a malformed {{, a variable with no known start and raw output are errors in words, naming the field", () => {
    expect(checkEmailTemplate({ subject: "Hi {{contact.name", text: "ok", html: null }).errors).toEqual([
      { field: "subject", message: 'The subject has a "{{" that is never closed with "}}". Write each variable as {{contact.name}}, or remove the stray braces.' },
    ]);
    expect(checkEmailTemplate({ subject: "Hi", text: "line one\n{{contact.name}} and {{ oops", html: null }).errors[0]?.message).toBe(
      'The message (line 2) has a "{{" that is never closed with "}}". Write each variable as {{contact.name}}, or remove the stray braces.',
    );
    expect(checkEmailTemplate({ subject: "Hi {{firstname}}", text: "ok", html: null }).errors).toEqual([
      { field: "subject", message: "The subject: {{firstname}} is not a variable: variables start with input., contact., steps. or run. (for example {{contact.name}})." },
    ]);
    expect(checkEmailTemplate({ subject: "Hi", text: "ok", html: "<p>{{{contact.name}}}</p>" }).errors).toEqual([
      { field: "html", message: "The HTML message: {{{contact.name}}} would insert text without escaping it; write {{contact.name}}." },
    ]);
  });
});

describe("saved emails, each organisation's own", () => {
  it("creates, lists, changes and deletes; another organisation can neither read, change nor delete it", async () => {
    const { saved, repeated } = await createSavedEmail(t.db, ids.acme, welcome, "user:olivia@acme.test");
    expect(repeated).toBe(false);
    expect(saved.id).toMatch(/^etp_[0-9a-f]{32}$/);
    expect(saved.check.notes).toEqual(['Needs a step named "draft" before the send step (for {{steps.draft.output.text}}).']);
    expect((await listSavedEmails(t.db, ids.acme)).map((s) => s.name)).toEqual(["Welcome 1"]);

    // Globex, with acme's id: nothing to see, nothing changed, nothing deleted.
    expect(await listSavedEmails(t.db, ids.globex)).toEqual([]);
    await expect(getSavedEmail(t.db, ids.globex, saved.id)).rejects.toBeInstanceOf(SavedEmailNotFoundError);
    await expect(updateSavedEmail(t.db, ids.globex, saved.id, saved.updatedAt, { ...welcome, subject: "stolen" }, "user:bob@globex.test")).rejects.toBeInstanceOf(
      SavedEmailNotFoundError,
    );
    expect(await deleteSavedEmail(t.db, ids.globex, saved.id)).toBe(false);
    expect((await getSavedEmail(t.db, ids.acme, saved.id)).subject).toBe(welcome.subject);

    const changed = await updateSavedEmail(t.db, ids.acme, saved.id, saved.updatedAt, { ...welcome, subject: "Welcome aboard" }, "user:sam@acme.test");
    expect(changed).toMatchObject({ subject: "Welcome aboard", updatedBy: "user:sam@acme.test", createdBy: "user:olivia@acme.test" });
    expect(changed.updatedAt.getTime()).toBeGreaterThan(saved.updatedAt.getTime());
    // The same change sent again (a second click) is harmless; another change over the newer one is refused in words.
    expect((await updateSavedEmail(t.db, ids.acme, saved.id, saved.updatedAt, { ...welcome, subject: "Welcome aboard" }, "user:sam@acme.test")).subject).toBe("Welcome aboard");
    await expect(updateSavedEmail(t.db, ids.acme, saved.id, saved.updatedAt, { ...welcome, subject: "Late" }, "user:olivia@acme.test")).rejects.toThrow(
      new SavedEmailChangedError("user:sam@acme.test").message,
    );
    expect(await deleteSavedEmail(t.db, ids.acme, saved.id)).toBe(true);
    expect(await deleteSavedEmail(t.db, ids.acme, saved.id)).toBe(false);
    await expect(getSavedEmail(t.db, ids.acme, saved.id)).rejects.toThrow("This saved email no longer exists (someone deleted it): reload the list.");
  });

  it("a name is unique per organisation whatever its case, said in words; a repeated create makes no second row", async () => {
    const first = await createSavedEmail(t.db, ids.acme, { ...welcome, name: "  Nudge  " }, "user:olivia@acme.test");
    expect(first.saved.name).toBe("Nudge");
    const again = await createSavedEmail(t.db, ids.acme, { ...welcome, name: "Nudge" }, "user:olivia@acme.test");
    expect(again).toMatchObject({ repeated: true, saved: { id: first.saved.id } });
    await expect(createSavedEmail(t.db, ids.acme, { ...welcome, name: "nudge", subject: "Other" }, "user:sam@acme.test")).rejects.toThrow(
      'There is already a saved email named "Nudge": pick another name, or open that one to change it.',
    );
    const other = await createSavedEmail(t.db, ids.acme, { ...welcome, name: "Follow-up" }, "user:sam@acme.test");
    await expect(updateSavedEmail(t.db, ids.acme, other.saved.id, other.saved.updatedAt, { ...welcome, name: "NUDGE" }, "user:sam@acme.test")).rejects.toBeInstanceOf(
      SavedEmailExistsError,
    );
    // Two clicks at one instant: one row, both answered with it.
    const twice = await Promise.all([1, 2].map(() => createSavedEmail(t.db, ids.acme, { ...welcome, name: "Same instant" }, "user:olivia@acme.test")));
    expect(new Set(twice.map((r) => r.saved.id)).size).toBe(1);
    expect(twice.map((r) => r.repeated).sort()).toEqual([false, true]);
    // Another organisation may use the same name.
    expect((await createSavedEmail(t.db, ids.globex, { ...welcome, name: "Nudge" }, "user:bob@globex.test")).repeated).toBe(false);
    const rows = await t.sql.query("SELECT org_id FROM email_templates WHERE lower(name) = 'nudge' ORDER BY org_id");
    expect(rows.rows).toHaveLength(2);
  });

  it("an organisation keeps at most 500 saved emails, said in words", async () => {
    const org = (await t.sql.query<{ id: string }>("INSERT INTO organisations (slug, name) VALUES ('busy', 'Busy') RETURNING id")).rows[0]?.id as string;
    await t.sql.query("INSERT INTO email_templates (org_id, name, subject, text, created_by, updated_by) SELECT $1, 'e' || i, 's', 't', 'x', 'x' FROM generate_series(1, 500) i", [org]);
    await expect(createSavedEmail(t.db, org, { ...welcome, name: "One more" }, "user:x@busy.test")).rejects.toThrow(
      "An organisation keeps at most 500 saved emails: delete one you no longer use, then save again.",
    );
    await deleteSavedEmail(t.db, org, (await listSavedEmails(t.db, org))[0]?.id as string);
    expect((await createSavedEmail(t.db, org, { ...welcome, name: "One more" }, "user:x@busy.test")).repeated).toBe(false);
  });

  it("refuses to save a saved email whose variables are malformed, naming the field", async () => {
    const error = await createSavedEmail(t.db, ids.acme, { ...welcome, name: "Broken", text: "Hi {{contact.name" }, "user:olivia@acme.test").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SavedEmailInvalidError);
    expect((error as SavedEmailInvalidError).problems.map((p) => p.field)).toEqual(["text"]);
    expect((await listSavedEmails(t.db, ids.acme)).some((s) => s.name === "Broken")).toBe(false);
  });

  it("through the web's role, an organisation's scope sees and writes only its own saved emails (row-level security)", async () => {
    // The scope as the web's pool reads it when it hands out a connection (packages/db/src/scope.ts).
    let scope: DbScope = {};
    const web: Db = createDb(urlAsRole(t.adminUrl, "holdfast_web"), { poolSize: 1, scope: async () => scope });
    const as = <T>(orgId: string, work: () => Promise<T>) => ((scope = { orgIds: [orgId] }), work());
    try {
      const acmeCount = (await listSavedEmails(t.db, ids.acme)).length;
      expect(acmeCount).toBeGreaterThan(0);
      // A query that forgot its org filter still sees only the scope's rows.
      const seen = await as(ids.globex, () => web.$queryRawUnsafe<{ org_id: string }[]>("SELECT org_id FROM email_templates"));
      expect(new Set(seen.map((r) => r.org_id))).toEqual(new Set([ids.globex]));
      await expect(as(ids.globex, () => createSavedEmail(web, ids.acme, { ...welcome, name: "Planted" }, "user:bob@globex.test"))).rejects.toThrow();
      expect(await as(ids.globex, () => listSavedEmails(web, ids.acme))).toEqual([]);
      expect(await as(ids.acme, () => listSavedEmails(web, ids.acme))).toHaveLength(acmeCount);
    } finally {
      await web.$disconnect();
    }
  });
});

describe("a send step remembers the saved email it was filled from", () => {
  it("as an optional, bounded field: graphs without it stay valid, anything else in it is refused", () => {
    const step = { connection: "mail", subject: "Hi", text: "Hello" };
    expect(sendEmailConfig.safeParse(step).success).toBe(true);
    expect(sendEmailConfig.safeParse({ ...step, savedEmail: { id: "etp_1", name: "Welcome 1" } }).success).toBe(true);
    expect(sendEmailConfig.safeParse({ ...step, savedEmail: { id: "etp_1", name: "x".repeat(101) } }).success).toBe(false);
    expect(sendEmailConfig.safeParse({ ...step, savedEmail: { id: "etp_1", name: "W", subject: "smuggled" } }).success).toBe(false);
  });
});
