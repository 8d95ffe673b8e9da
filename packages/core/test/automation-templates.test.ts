import { createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertMember } from "../src/people/auth/users";
import { createConnection } from "../src/providers/connections/connect";
import { draftProblems, getDraft, publishDraft } from "../src/run/automations/drafts";
import { createFromTemplate, TemplateAnswersError, templateProblems } from "../src/run/automations/from-template";
import { budgetsSetAllowed } from "../src/store/sql/budgets";
import { graphSchema } from "../src/versions/graph";
import { automationTemplates, buildFromTemplate, templateOf } from "../src/versions/kinds/templates";

/**
 * Each template's journey, with its questions answered, passes every publish check (the pure ones and the
 * organisation's: connections, approvers, the model budget); a missing or wrong answer is named by its question;
 * Create makes the automation with its draft (and goal) once, a repeated Create reads it back.
 */
const answers: Record<string, Record<string, unknown>> = {
  "lead-follow-up": { mail: "mail", sender: "Sam at Acme", model: "writer", crm: "crm", approvers: { users: ["sam@acme.test"] }, slack: "slack", slackChannel: "C0MARKETING" },
  "welcome-series": { mail: "mail", sender: "Sam at Acme", product: "Acme" },
  "re-engagement": { mail: "mail", sender: "Sam at Acme", product: "Acme", link: "https://app.acme.test/login" },
};

let t: TestDatabase;
const q = async (text: string, params: unknown[] = []) => (await t.sql.query(text, params)).rows;
let orgId = "";
beforeAll(async () => {
  t = await createTestDatabase();
  orgId = (await q("INSERT INTO organisations (slug, name) VALUES ('acme', 'Acme') RETURNING id"))[0].id as string;
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "smtp.example.com", from: "sam@acme.test" }, secret: "s" });
  await createConnection(t.db, { orgId, kind: "crm", name: "crm", config: { baseUrl: "https://crm.example.com" }, secret: "s" });
  await createConnection(t.db, { orgId, kind: "model", name: "writer", config: { baseUrl: "https://model.example.com" }, secret: "s" });
  await createConnection(t.db, { orgId, kind: "slack", name: "slack", config: {}, secret: "s" });
  await upsertMember(t.db, { orgId, email: "sam@acme.test", name: "Sam", password: "a long enough password", role: "approver" });
  await budgetsSetAllowed(t.db, orgId, 5_000_000, "test");
});
afterAll(async () => t?.drop());

describe("automation templates", () => {
  it("there are at least the three the gallery promises, each with words for every step", () => {
    expect(automationTemplates.map((x) => x.id)).toEqual(["lead-follow-up", "welcome-series", "re-engagement"]);
    for (const x of automationTemplates) {
      expect(x.purpose.length, x.id).toBeGreaterThan(20);
      expect(x.steps.length, x.id).toBeGreaterThan(3);
      expect(Object.keys(answers[x.id] ?? {}).sort(), `${x.id} asks what the test answers`).toEqual(x.fields.map((f) => f.name).sort());
    }
  });

  for (const template of automationTemplates) {
    it(`${template.id}: the answered journey is a valid graph with no publish problem, and publishes`, async () => {
      const built = buildFromTemplate(template, answers[template.id]);
      if (!built.ok) throw new Error(JSON.stringify(built.problems));
      expect(graphSchema.safeParse(built.graph).success).toBe(true);
      expect(draftProblems(built.graph)).toEqual([]);
      expect(await templateProblems(t.db, orgId, template.id, answers[template.id])).toEqual({ answers: [], publish: [] });
      // Built from the kinds' defaults with fixed ids: the same answers make the same journey.
      expect(buildFromTemplate(template, answers[template.id])).toEqual(built);

      const made = await createFromTemplate(t.db, { orgId, templateId: template.id, answers: answers[template.id], name: template.name, slug: template.id });
      expect(made.created).toBe(true);
      const draft = await getDraft(t.db, orgId, made.id);
      expect(draft.problems).toEqual([]);
      expect(draft.graph).toEqual(built.graph);
      expect((await publishDraft(t.db, orgId, made.id, "test", "owner")).version).toBe(1);
    });
  }

  it("missing and wrong answers are named by their questions, and nothing is created", async () => {
    const lead = templateOf("lead-follow-up");
    if (!lead) throw new Error("no lead-follow-up");
    const built = buildFromTemplate(lead, { mail: "mail", sender: "Sam {{evil}}", approvers: { users: [] }, slackChannel: "C0MARKETING" });
    expect(built.ok).toBe(false);
    const named = built.ok ? [] : built.problems.map((p) => `${p.label}: ${p.message}`);
    expect(named).toEqual(
      expect.arrayContaining([
        "Sign the emails as: Write it without { or }",
        "Draft with: Pick the AI model that drafts the email",
        "CRM to update: Pick the CRM to update",
        "Who approves each email: name at least one approver or a role",
      ]),
    );
    const before = (await q("SELECT count(*)::int AS n FROM automations"))[0].n;
    await expect(createFromTemplate(t.db, { orgId, templateId: "welcome-series", answers: { mail: "mail" }, name: "W", slug: "w" })).rejects.toBeInstanceOf(TemplateAnswersError);
    expect((await q("SELECT count(*)::int AS n FROM automations"))[0].n).toBe(before);
    expect((await templateProblems(t.db, orgId, "re-engagement", { mail: "mail", sender: "Sam", product: "Acme", link: "app.acme.test" })).answers).toEqual([
      { field: "link", label: "Link back to", message: "Give the address the email's link opens, starting with https://, such as https://app.acme.com/login" },
    ]);
  });

  it("the organisation's gaps are said before Create: a connection gone, no model budget left", async () => {
    const other = (await q("INSERT INTO organisations (slug, name) VALUES ('bare', 'Bare') RETURNING id"))[0].id as string;
    await budgetsSetAllowed(t.db, other, 0, "test");
    const { publish } = await templateProblems(t.db, other, "lead-follow-up", answers["lead-follow-up"]);
    expect(publish.map((p) => p.message)).toEqual(
      expect.arrayContaining([
        'there is no connection named "writer" in this organisation; add it in Settings -> Connections or pick another',
        "The model budget is used up ($0.00 of $0.00 left this month): Draft steps will wait. Raise it in Settings -> Model budget.",
      ]),
    );
  });

  it("a repeated Create reads back the first one's automation; the same address made otherwise is a conflict", async () => {
    const a = { orgId, templateId: "re-engagement", answers: answers["re-engagement"], name: "Win back", slug: "win-back" };
    const [one, two] = await Promise.all([createFromTemplate(t.db, a), createFromTemplate(t.db, a)]);
    expect(one.id).toBe(two.id);
    expect([one.created, two.created].sort()).toEqual([false, true]);
    expect((await createFromTemplate(t.db, a)).created).toBe(false);
    expect((await q("SELECT goal FROM automations WHERE id = $1", [one.id]))[0].goal).toBe("clicked");
    expect((await q("SELECT count(*)::int AS n FROM automations WHERE slug = 'win-back'"))[0].n).toBe(1);
    await expect(createFromTemplate(t.db, { ...a, answers: { ...a.answers, product: "Other" } })).rejects.toThrow(/already exists/);
    await expect(createFromTemplate(t.db, { ...a, templateId: "nope" })).rejects.toThrow(/no template "nope"/);
  });
});
