import { createTestDatabase, publish, type SmtpTarget, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createConnection } from "../src/providers/connections/connect";
import { setContactAttributesAs } from "../src/run/contacts/change";
import { eraseContact } from "../src/run/contacts/erase";
import { ContactChangeForbiddenError } from "../src/run/contacts/rules";
import { advanceRun } from "../src/run/engine/advance";
import { defaultConfigIn } from "../src/versions/kinds/defaults";
import { contactAttributesOf, contactPaths, declaredFieldsSchema, sampleFromFields } from "../src/versions/kinds/declared-fields";
import { variablesAt } from "../src/versions/kinds/variables";
import { createLogger } from "../src/base/log";
import { contactsOfRun } from "../src/store/sql/contacts";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { testRunSample } from "../src/run/test-runs/sample";
import { templateContact } from "../src/base/templates/contact";
import { renderTemplate } from "../src/base/templates/render";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * A trigger declares the fields its form sends (issue 41): the variable picker offers them before any delivery, a
 * new wait counts in the declared zone field, and the contact keeps the name, company and kept fields of each
 * delivery (the latest values win), usable in templates as {{contact.name}}; erasing the contact removes them.
 */

const fields = [
  { name: "email", type: "email", example: "maya@example.com", role: "email" },
  { name: "tz", type: "time_zone", example: "America/New_York", role: "time_zone" },
  { name: "full_name", type: "text", example: "Maya Lopez", role: "name" },
  { name: "org.company", type: "text", example: "Lumen", role: "company" },
  { name: "job", type: "text", example: "Head of growth", role: "other", keep: true },
  { name: "message", type: "text", example: "Call me", role: "other" },
];
const triggerConfig = { eventIdField: "id", fields };

let t: TestDatabase;
let smtp: SmtpTarget;
let orgId = "";
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;

/** form -> the steps in order -> done. */
function storyGraph(steps: Record<string, unknown>[]) {
  const nodes = [{ id: "form", kind: "trigger", config: triggerConfig }, ...steps, { id: "done", kind: "end" }];
  const ids = nodes.map((n) => n.id as string);
  return parseGraph({ nodes, edges: ids.slice(1).map((to, i) => ({ from: ids[i] as string, to })) });
}

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget();
  // One-statement start (no timer first) and a send whose subject greets the contact by its attributes.
  orgId = (
    await publish(
      t.db,
      storyGraph(
        [
          {
            id: "send",
            kind: "send_email",
            config: { connection: "mail", subject: "Hi {{contact.name}} of {{contact.company}} ({{contact.job}})", text: "Hello {{input.org.company}}" },
          },
        ],
      ),
      { automation: "leads" },
    )
  ).orgId;
  // A wait first: the start takes the engine's transaction (contactsResolve in TypeScript).
  await publish(t.db, storyGraph([{ id: "later", kind: "wait", config: { rule: { kind: "duration", seconds: 3600 } } }]), { automation: "slow" });
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
});
afterAll(async () => {
  await smtp?.close();
  await t?.drop();
});

const deliver = (automation: string, body: Record<string, unknown>) =>
  startRun(t.db, {
    orgSlug: "acme",
    automationSlug: automation,
    rawBody: JSON.stringify(body),
    body,
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "webhook",
    auth: { kind: "operator" },
    delivery: { contentType: "application/json", bodyBytes: JSON.stringify(body).length },
  });

const contactRow = async (email: string) => (await rows("SELECT id, email, time_zone, attributes FROM contacts WHERE org_id = $1 AND email = $2", [orgId, email]))[0];

describe("declared fields (pure)", () => {
  it("validates the table: one field per role, types that fit the role, examples that fit the type", () => {
    expect(declaredFieldsSchema.safeParse(fields).success).toBe(true);
    const twice = declaredFieldsSchema.safeParse([...fields, { name: "email2", type: "email", role: "email" }]);
    expect(twice.error?.issues.map((i) => i.message)).toEqual(["only one field can be the contact's email"]);
    const badZone = declaredFieldsSchema.safeParse([{ name: "tz", type: "time_zone", example: "email", role: "time_zone" }]);
    expect(badZone.error?.issues.map((i) => i.message)).toEqual(["an example time zone, such as Europe/Berlin"]);
    const reserved = declaredFieldsSchema.safeParse([{ name: "consent", type: "text", role: "other", keep: true }]);
    expect(reserved.success).toBe(false);
    expect(declaredFieldsSchema.safeParse([{ name: "lead company", type: "text", role: "other" }]).success).toBe(false);
  });

  it("the roles say where the email and zone are; the older by-hand paths still work without them", () => {
    const parsed = declaredFieldsSchema.parse(fields);
    expect(contactPaths({ contactEmailField: "email_typed", fields: parsed })).toEqual({ email: "email", timeZone: "tz" });
    expect(contactPaths({ contactEmailField: "lead.email", contactTimeZoneField: "lead.tz" })).toEqual({ email: "lead.email", timeZone: "lead.tz" });
    expect(sampleFromFields(parsed)).toEqual({
      email: "maya@example.com",
      tz: "America/New_York",
      full_name: "Maya Lopez",
      org: { company: "Lumen" },
      job: "Head of growth",
      message: "Call me",
    });
    expect(contactAttributesOf(parsed, { full_name: "  Ann  ", org: { company: "Acme" }, job: "", message: "not kept" })).toEqual({ name: "Ann", company: "Acme" });
  });

  it("the picker offers the declared fields and contact attributes before any delivery, and adds what a delivery's sample has", () => {
    const graph = storyGraph([{ id: "send", kind: "send_email", config: { connection: "mail", subject: "x", text: "y" } }]);
    const paths = (sample: unknown) => variablesAt(graph, "send", sample).map((v) => v.path);
    const before = paths(null);
    for (const p of ["input.email", "input.tz", "input.full_name", "input.org.company", "input.job", "input.message", "contact.name", "contact.company", "contact.job"]) {
      expect(before).toContain(p);
    }
    expect(before).not.toContain("contact.message");
    expect(variablesAt(graph, "send", null).find((v) => v.path === "contact.name")?.example).toBe("Maya Lopez");
    const after = paths({ email: "a@b.c", utm: { source: "ads" } });
    expect(after).toContain("input.utm.source");
    expect(after).toContain("input.org.company");
  });

  it("a new wait counts in the declared zone field (the contact's zone), not a fixed Europe/Berlin", () => {
    expect(defaultConfigIn("wait", [{ kind: "trigger", config: triggerConfig }])).toEqual({ rule: { kind: "next_weekday", at: "09:00" }, zoneFrom: "input.tz" });
    expect(defaultConfigIn("wait", [{ kind: "trigger", config: { contactTimeZoneField: "timezone" } }])).toMatchObject({ zoneFrom: "input.timezone" });
    expect(defaultConfigIn("wait", [{ kind: "trigger", config: {} }])).toMatchObject({ zone: "Europe/Berlin" });
  });
});

describe("a Test run's sample", () => {
  it("is the published trigger's declared examples when no delivery came yet, and a delivery's payload over them after", async () => {
    const { automationId } = await publish(t.db, storyGraph([]), { automation: "fresh" });
    expect(await testRunSample(t.db, orgId, automationId)).toMatchObject({ email: "maya@example.com", full_name: "Maya Lopez", org: { company: "Lumen" } });
    await deliver("fresh", { id: "f1", email: "zoe@example.com", utm: "ads" });
    expect(await testRunSample(t.db, orgId, automationId)).toMatchObject({ email: "zoe@example.com", full_name: "Maya Lopez", utm: "ads" });
  });
});

describe("contacts keep attributes", () => {
  it("a delivery writes name, company and kept fields on the contact; a second one updates them (latest wins)", async () => {
    const first = await deliver("leads", { id: "s1", email: "Maya@Example.com", tz: "Europe/Madrid", full_name: "Maya", org: { company: "Lumen" }, job: "CMO", message: "hi" });
    const c1 = await contactRow("maya@example.com");
    expect(c1).toMatchObject({ time_zone: "Europe/Madrid", attributes: { name: "Maya", company: "Lumen", job: "CMO" } });
    expect(c1.attributes).not.toHaveProperty("message");
    expect((await rows("SELECT contact_id FROM runs WHERE id = $1", [first.runId]))[0].contact_id).toBe(c1.id);

    // Same contact, another company and no job: the company changes, the job stays, the name is sent again.
    await deliver("leads", { id: "s2", email: "maya@example.com", full_name: "Maya Lopez", org: { company: "Lumen Labs" } });
    expect((await contactRow("maya@example.com")).attributes).toEqual({ name: "Maya Lopez", company: "Lumen Labs", job: "CMO" });

    // The transactional start (a wait first, and a zone change that moves the contact) writes them the same way.
    await deliver("slow", { id: "s3", email: "maya@example.com", tz: "Asia/Tokyo", job: "CEO" });
    expect(await contactRow("maya@example.com")).toMatchObject({ time_zone: "Asia/Tokyo", attributes: { name: "Maya Lopez", company: "Lumen Labs", job: "CEO" } });
  });

  it("templates render {{contact.name}}, {{contact.company}} and kept fields; a contact with no name renders empty", async () => {
    const { runId } = await deliver("leads", { id: "s4", email: "ann@example.com", full_name: "Ann", org: { company: "Acme" }, job: "CTO" });
    await advanceRun(t.db, graphs, { orgId, runId, reason: "started" });
    const [{ id }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
    const runner = new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log });
    expect((await runner.run(id)).kind).toBe("settled");
    const sent = smtp.received.find((m) => m.to.includes("ann@example.com"));
    expect(sent?.subject).toBe("Hi Ann of Acme (CTO)");

    const stored = await t.db.$transaction((tx) => contactsOfRun(tx, orgId, runId));
    if (!stored) throw new Error("no contact");
    const nameless = { ...stored, attributes: {} };
    expect(renderTemplate("Hi {{contact.name}}!", { input: {}, contact: templateContact(nameless), steps: {}, run: { id: runId } }, "text")).toBe("Hi !");
    expect(() => renderTemplate("{{contact.job}}", { input: {}, contact: templateContact(nameless), steps: {}, run: { id: runId } }, "text")).toThrow(/has no value/);
  });

  it("a Test run writes no contact: its sample's name and company stand in for its templates", async () => {
    const body = { id: "t1", email: "tess@example.com", full_name: "Tess", org: { company: "Initech" }, job: "QA" };
    const { runId } = await startRun(t.db, {
      orgSlug: "acme",
      automationSlug: "leads",
      rawBody: JSON.stringify(body),
      body,
      headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
      via: "test",
      auth: { kind: "operator" },
      test: { by: "user:sam@acme.test" },
    });
    expect(await contactRow("tess@example.com")).toBeUndefined();
    const [{ id }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
    expect((await new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log }).run(id)).kind).toBe("settled");
    const [{ output }] = await rows("SELECT output FROM steps WHERE id = $1", [id]);
    expect(output.subject).toBe("Hi Tess of Initech (QA)");
  });

  it("Settings edits them as an editor (an approver is refused); erasing the contact removes them", async () => {
    const c = await contactRow("maya@example.com");
    await expect(setContactAttributesAs(t.db, { role: "approver", by: "user:a" }, orgId, c.id, { name: "X" })).rejects.toBeInstanceOf(ContactChangeForbiddenError);
    const edited = await setContactAttributesAs(t.db, { role: "editor", by: "user:e" }, orgId, c.id, { name: "Maya L.", company: "", job: "CEO", city: "Madrid" });
    expect(edited.changed).toBe(true);
    expect((await contactRow("maya@example.com")).attributes).toEqual({ name: "Maya L.", job: "CEO", city: "Madrid" });
    expect((await setContactAttributesAs(t.db, { role: "editor", by: "user:e" }, orgId, c.id, { name: "Maya L.", job: "CEO", city: "Madrid" })).changed).toBe(false);

    await eraseContact(t.db, graphs, orgId, "maya@example.com", "user:owner");
    const after = await rows("SELECT email, attributes, time_zone FROM contacts WHERE id = $1", [c.id]);
    expect(after[0].email).toMatch(/^sha256:/);
    expect(after[0].attributes).toEqual({});
    // Nothing of the name or company is left anywhere on the contacts table.
    expect(await rows("SELECT id FROM contacts WHERE org_id = $1 AND attributes::text ~ 'Maya|Lumen|Madrid'", [orgId])).toEqual([]);
    await expect(setContactAttributesAs(t.db, { role: "owner", by: "user:o" }, orgId, c.id, { name: "again" })).rejects.toThrow(/erased/);
  });
});
