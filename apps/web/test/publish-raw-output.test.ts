import { parseGraph } from "@holdfast/core/versions";
import { createConnection } from "@holdfast/core/providers";
import { sessionUser, signIn, upsertMember } from "@holdfast/core/people";
import { createTestDatabase, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCallerFactory } from "../src/server/trpc/init";
import { appRouter } from "../src/server/trpc/router";

/**
 * Publish through the API refuses a template that writes text without escaping it (Handlebars' `{{{x}}}` or
 * `{{& x}}`), naming the field and saying why in words; the draft still saves, and the version stays what it was.
 */
let t: TestDatabase;
let automationId = "";
const createCaller = createCallerFactory(appRouter);

const graph = (html: string) => ({
  nodes: [
    { id: "t", kind: "trigger", config: { eventIdField: "id" } },
    { id: "send", kind: "send_email", config: { connection: "mail", to: "{{contact.email}}", subject: "Hi", text: "Hello", html } },
    { id: "done", kind: "end" },
  ],
  edges: [
    { from: "t", to: "send" },
    { from: "send", to: "done" },
  ],
});

beforeAll(async () => {
  t = await createTestDatabase();
  const a = await publish(t.db, parseGraph(graph("<p>Hello</p>")), { automation: "welcome" });
  automationId = a.automationId;
  await upsertMember(t.db, { orgId: a.orgId, email: "eddie@acme.test", name: "Eddie", password: "a long enough password", role: "editor" });
  await createConnection(t.db, { orgId: a.orgId, kind: "smtp", name: "mail", config: { host: "smtp.example.com", from: "a@acme.test" }, secret: "s" });
});
afterAll(async () => t?.drop());

describe("versions.publish", () => {
  it("refuses {{{input.name}}} in an email's HTML with a sentence a marketer can act on", async () => {
    const s = await signIn(t.db, "eddie@acme.test", "a long enough password");
    const eddie = createCaller({ db: t.db, user: await sessionUser(t.db, s?.token) });
    const input = { orgSlug: "acme", automationId };
    const { revision } = await eddie.drafts.get(input);
    const why =
      "{{{input.name}}} uses triple braces, which insert text without escaping it, so a contact could put their own HTML or links into your email or message. Use {{input.name}}: it is shown exactly as typed.";
    const draft = await eddie.drafts.save({ ...input, graph: graph("<p>Hi {{{input.name}}}</p>"), baseRevision: revision });
    expect(draft.problems).toEqual([{ path: "node:send.config.html", message: why }]);
    const refused = await eddie.versions.publish(input).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining(why), cause: { problems: [{ path: "node:send.config.html", message: why }] } });
    expect((await t.sql.query("SELECT count(*)::int AS n FROM automation_versions WHERE automation_id = $1", [automationId])).rows).toEqual([{ n: 1 }]);
    // Written as {{input.name}}, it publishes.
    const fixed = await eddie.drafts.save({ ...input, graph: graph("<p>Hi {{input.name}}</p>"), baseRevision: draft.revision });
    expect(fixed.problems).toEqual([]);
    await expect(eddie.versions.publish(input)).resolves.toMatchObject({ version: 2 });
  });
});
