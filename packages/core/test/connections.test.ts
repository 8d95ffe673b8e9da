import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestDatabase, type CrmTarget, publish, type SmtpTarget, startCrmTarget, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectionTargets, startConnectionTargets } from "../../testkit/src/connection-targets";
import { lanes } from "../src/base/catalog";
import {
  connectionConfigProblems,
  connectionKind,
  connectionKinds,
  connectionNameProblem,
  connectionSecretProblem,
  problemSentence,
  underBaseUrl,
} from "../src/versions/connection-kinds";
import { addConnection, ConnectionConfigError, ConnectionInUseError, ConnectionNotFoundError, deleteConnection, listConnections, updateConnection } from "../src/providers/connections/manage";
import { retypeSecret } from "../src/providers/connections/destination";
import { testConnectionSettings, testSavedConnection } from "../src/providers/connections/test";
import { deleteRefusal, draftsNote, liveUses, renameRefusal } from "../src/providers/connections/uses";
import { createLogger } from "../src/base/log";
import { parseAllowList } from "../src/base/allow-list";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { getDraft, saveDraft } from "../src/run/automations/drafts";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * Connection kinds as modules: their schemas refuse with sentences naming the field, the secret rules, the decision
 * on renames and deletes while published versions name a connection, Test connection against real local servers
 * (SMTP, CRM, model, Slack, an HTTP API), and an http_request step taking its credential from a connection.
 */
const problems = (kind: string, config: unknown) => connectionConfigProblems(connectionKind(kind) as NonNullable<ReturnType<typeof connectionKind>>, config).map(problemSentence);

describe("connection kinds (pure)", () => {
  it("every kind has a plain label, a description and a form field for every setting it stores", () => {
    expect(connectionKinds.map((k) => [k.kind, k.label])).toEqual([
      ["smtp", "Email (SMTP)"],
      ["model", "AI model (OpenAI-compatible)"],
      ["crm", "CRM"],
      ["slack", "Slack"],
      ["http", "HTTP API"],
    ]);
    for (const k of connectionKinds) {
      const keys = Object.keys((k.config as unknown as { shape: Record<string, unknown> }).shape).sort();
      expect(k.fields.map((f) => f.name).sort(), k.kind).toEqual(keys);
      expect(k.description.length, k.kind).toBeGreaterThan(20);
      for (const f of k.fields) expect(["text", "number", "boolean", "select", "secret"], `${k.kind}.${f.name}`).toContain(f.widget.type);
    }
  });

  it("the kinds' modules are browser-safe: they import only zod, the field types and each other", () => {
    const dir = join(import.meta.dirname, "../src/versions/connection-kinds");
    for (const file of readdirSync(dir)) {
      const imports = [...readFileSync(join(dir, file), "utf8").matchAll(/from\s+"([^"]+)"/g)].map((m) => m[1]);
      for (const i of imports) expect(["zod", "../../forms/fields"].includes(i as string) || /^\.\/[a-z]+$/.test(i as string), `${file}: ${i}`).toBe(true);
    }
  });

  it("refuses settings with sentences that name the field by its label", () => {
    expect(problems("smtp", { host: "smtp.example.com", port: 70000, from: "sam@acme.com" })).toEqual(["Port: must be a whole number between 1 and 65535"]);
    expect(problems("smtp", { host: "smtp.example.com", port: "587", from: "sam@acme.com" })).toEqual(["Port: must be a number"]);
    expect(problems("smtp", { from: "sam" })).toEqual(["Server: is required", 'From address: must be an email address, e.g. "Sam at Acme <sam@acme.com>"']);
    expect(problems("smtp", { host: "h", from: "a@b.c", colour: "red" })).toEqual(["colour: is not a setting of an Email (SMTP) connection: remove it"]);
    expect(problems("smtp", { host: "h", from: "a@b.c", tls: "ssl" })).toEqual(['Security: must be one of "implicit", "starttls", "none"']);
    expect(problems("model", { baseUrl: "ftp://models.example.com", model: "m", inputMicrosPerMTok: 1, outputMicrosPerMTok: -1 })).toEqual([
      "API base URL: must be a web address starting with https://",
      "Price of output (US dollars per million tokens): must be a price in US dollars per million tokens, 0 or more",
    ]);
    expect(problems("model", { baseUrl: "https://api.openai.com/v1", model: "gpt-4o-mini" })).toEqual([
      "Price of input (US dollars per million tokens): is required",
      "Price of output (US dollars per million tokens): is required",
    ]);
    expect(problems("crm", {})).toEqual(["API base URL: is required"]);
    expect(problems("slack", { teamId: "acme" })).toEqual(["Workspace ID: must be a workspace ID: T followed by capital letters and digits, e.g. T024BE7LD"]);
    const api = { baseUrl: "https://api.example.com" };
    expect(problems("http", { ...api, header: "Bad Header" })).toEqual(["Header name: must be a header name: letters, digits and -, e.g. Authorization or X-Api-Key"]);
    expect(problems("http", { ...api, header: "content-type" })).toEqual(["Header name: is set by the request itself: pick another header"]);
    // The base URL is required: the credential is only ever sent under it.
    expect(problems("http", {})).toEqual(["Base URL: is required"]);
    expect(connectionKind("http").config.parse(api)).toEqual({ header: "Authorization", ...api });
    expect(problems("smtp", null)).toEqual(["Settings: are missing: fill in the form"]);
  });

  it("says when the secret is needed, and what a name may be", () => {
    const smtp = connectionKind("smtp");
    expect(connectionSecretProblem(smtp, { host: "h", from: "a@b.c", user: "sam" }, false)).toBe("Password: is required when a user name is set");
    expect(connectionSecretProblem(smtp, { host: "h", from: "a@b.c" }, false)).toBeNull();
    expect(connectionSecretProblem(connectionKind("crm"), { baseUrl: "https://crm.example.com" }, false)).toBe("API token: is required");
    expect(connectionSecretProblem(connectionKind("crm"), { baseUrl: "https://crm.example.com" }, true)).toBeNull();
    expect(connectionNameProblem("mailbox")).toBeNull();
    expect(connectionNameProblem("Mail Box")).toMatch(/^Name: use lowercase letters, digits, - or _, starting with a letter/);
    expect(connectionNameProblem("")).toBe("Name: is required");
  });

  it("sends an HTTP credential only under its base URL", () => {
    expect(underBaseUrl("https://api.example.com/v1/leads", "https://api.example.com/v1")).toBe(true);
    expect(underBaseUrl("https://api.example.com/v1", "https://api.example.com/v1/")).toBe(true);
    expect(underBaseUrl("https://api.example.com/v10/leads", "https://api.example.com/v1")).toBe(false);
    expect(underBaseUrl("https://api.example.com.evil.test/v1", "https://api.example.com/v1")).toBe(false);
    expect(underBaseUrl("http://api.example.com/v1/x", "https://api.example.com/v1")).toBe(false);
  });

  it("a connection is held by each automation's newest published version and by older ones with runs still running", () => {
    const rows = [
      { name: "mail", automationId: "a1", automationName: "Nurture", version: 3, latest: true, running: 0 },
      { name: "mail", automationId: "a1", automationName: "Nurture", version: 2, latest: false, running: 4 },
      { name: "mail", automationId: "a1", automationName: "Nurture", version: 1, latest: false, running: 0 },
      { name: "crm", automationId: "a2", automationName: "Welcome", version: 1, latest: true, running: 0 },
    ];
    const uses = liveUses(rows, "mail");
    expect(uses.map((u) => u.version)).toEqual([3, 2]);
    expect(deleteRefusal("mail", uses)).toBe(
      '"mail" cannot be deleted while automation "Nurture" version 3 and automation "Nurture" version 2 (4 runs still running on it) use it: publish versions that use another connection and let the runs on older versions finish, then delete it.',
    );
    expect(renameRefusal("mail", uses.slice(0, 1))).toBe(
      '"mail" cannot be renamed while automation "Nurture" version 3 uses it: published versions find their connections by name. Add a connection with the new name instead, publish versions that use it, then delete "mail".',
    );
    expect(deleteRefusal("mail", [])).toBeNull();
    expect(draftsNote("mail", ["Nurture", "Welcome"], "mailbox")).toBe('The drafts of "Nurture" and "Welcome" still name "mail": pick "mailbox" in their steps before publishing.');
    expect(draftsNote("mail", ["Nurture"], null)).toBe('The draft of "Nurture" still names "mail": pick another connection in its steps before publishing.');
  });
});

let t: TestDatabase;
let smtp: SmtpTarget;
let crm: CrmTarget;
let targets: ConnectionTargets;
let orgId = "";
let otherOrgId = "";

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget({ credentials: { user: "sam@acme.test", pass: "right password" } });
  crm = await startCrmTarget(["crm-token"]);
  targets = await startConnectionTargets();
  ({ orgId } = await publish(t.db, parseGraph({ nodes: [{ id: "t", kind: "trigger", config: {} }, { id: "e", kind: "end" }], edges: [{ from: "t", to: "e" }] }), { automation: "empty" }));
  ({ orgId: otherOrgId } = await publish(t.db, parseGraph({ nodes: [{ id: "t", kind: "trigger", config: {} }, { id: "e", kind: "end" }], edges: [{ from: "t", to: "e" }] }), { org: "other" }));
});
afterAll(async () => {
  await smtp?.close();
  await crm?.close();
  await targets?.close();
  await t?.drop();
});

describe("Test connection against real servers", () => {
  const smtpConfig = () => ({ host: "127.0.0.1", port: smtp.port, tls: "none", user: "sam@acme.test", from: "Sam <sam@acme.test>" });

  it("SMTP: logs in with the right password and says so; a wrong one reads as a sentence with the server's reason; nothing is sent", async () => {
    expect(await testConnectionSettings("smtp", smtpConfig(), "right password")).toEqual({ ok: true, message: `Logged in to 127.0.0.1:${smtp.port} as sam@acme.test.` });
    expect(await testConnectionSettings("smtp", smtpConfig(), "wrong")).toEqual({
      ok: false,
      message: "The server refused the user name or password: check them and save again (the server said: 535 Invalid username or password).",
    });
    expect(await testConnectionSettings("smtp", smtpConfig(), null)).toEqual({ ok: false, message: "Type the secret first: Password: is required when a user name is set." });
    expect(smtp.received).toHaveLength(0);
  });

  it("SMTP: a closed port, a missing name and a refused address each say what to check", async () => {
    const closed = await testConnectionSettings("smtp", { ...smtpConfig(), port: 9 }, "x");
    expect(closed).toEqual({ ok: false, message: "127.0.0.1:9 refused the connection: check the Server and Port (is the port right, is the server up?)." });
    const missing = await testConnectionSettings("smtp", { ...smtpConfig(), host: "no-such-host.invalid" }, "x");
    expect(missing).toEqual({ ok: false, message: "The name no-such-host.invalid could not be found: check the Server and Port for typos." });
    const guarded = await testConnectionSettings("smtp", smtpConfig(), "right password", { allow: parseAllowList("") });
    expect(guarded.ok).toBe(false);
    expect(guarded.message).toMatch(/^Holdfast does not connect to 127\.0\.0\.1: a loopback address.*Use the service's public address/);
  });

  it("model: lists the models with the key; a wrong key, a wrong base URL and an unknown model are sentences", async () => {
    const config = { baseUrl: targets.modelBaseUrl, model: "gpt-4o-mini", inputMicrosPerMTok: 150_000, outputMicrosPerMTok: 600_000 };
    expect(await testConnectionSettings("model", config, targets.modelKey)).toEqual({ ok: true, message: `Logged in to ${new URL(targets.origin).host}: the key works and "gpt-4o-mini" is available.` });
    expect(await testConnectionSettings("model", config, "sk-wrong")).toEqual({
      ok: false,
      message: "The model's API refused the key: check the API key and save again (it answered 401: Incorrect API key provided).",
    });
    expect((await testConnectionSettings("model", { ...config, baseUrl: `${targets.origin}/nope` }, targets.modelKey)).message).toBe(
      `${targets.origin}/nope/models does not exist: check the API base URL (it usually ends in /v1) (it answered 404: not found).`,
    );
    expect((await testConnectionSettings("model", { ...config, model: "gpt-9" }, targets.modelKey)).message).toBe(
      'The key works, but "gpt-9" is not among the 2 models this key may use (gpt-4o-mini, gpt-4o): check the Model.',
    );
  });

  it("CRM: a read that needs the token; a wrong token is refused in words; nothing is written", async () => {
    expect(await testConnectionSettings("crm", { baseUrl: crm.baseUrl }, "crm-token")).toEqual({ ok: true, message: `Logged in to the CRM at ${new URL(crm.baseUrl).host}: the API token works.` });
    expect(await testConnectionSettings("crm", { baseUrl: crm.baseUrl }, "stale")).toEqual({
      ok: false,
      message: "The CRM refused the API token: check it and save again (it answered 401: invalid token).",
    });
    expect(crm.records.size).toBe(0);
  });

  it("Slack: auth.test with the bot token; a wrong token and another workspace's token are sentences", async () => {
    const config = { teamId: targets.slackTeamId, apiUrl: targets.slackApiUrl };
    expect(await testConnectionSettings("slack", config, targets.slackToken)).toEqual({ ok: true, message: 'Logged in to Slack workspace "Acme" as holdfast.' });
    expect(await testConnectionSettings("slack", config, "xoxb-revoked")).toEqual({
      ok: false,
      message: "Slack refused the bot token: check it (it starts with xoxb-) and save again (Slack said: invalid_auth).",
    });
    expect((await testConnectionSettings("slack", { ...config, teamId: "T0OTHER" }, targets.slackToken)).message).toBe(
      'The token works, but it belongs to "Acme" (T0TEST), not T0OTHER: type T0TEST as the Workspace ID.',
    );
  });

  it("HTTP API: calls the base URL with the header; without a base URL there is nothing to test", async () => {
    const config = { header: targets.httpHeader, baseUrl: targets.httpBaseUrl };
    expect(await testConnectionSettings("http", config, targets.httpValue)).toEqual({ ok: true, message: `Reached ${new URL(targets.origin).host} with the X-Api-Key header: it answered 200.` });
    expect(await testConnectionSettings("http", config, "wrong")).toEqual({
      ok: false,
      message: `${new URL(targets.origin).host} refused the credential: check the X-Api-Key header's value and save again (it answered 401).`,
    });

  });

  it("a saved connection is tested with its stored secret, or with a new one typed before saving; another organisation's id is not found", async () => {
    const id = await addConnection(t.db, { orgId, kind: "crm", name: "crm-saved", config: { baseUrl: crm.baseUrl }, secret: "crm-token" });
    expect((await testSavedConnection(t.db, orgId, id)).ok).toBe(true);
    expect((await testSavedConnection(t.db, orgId, id, { secret: "typed-but-wrong" })).ok).toBe(false);
    // A changed address is never sent the stored secret: testing or saving it needs the secret typed again.
    const moved = { baseUrl: `${crm.baseUrl}/v2` };
    expect(await testSavedConnection(t.db, orgId, id, { config: moved })).toEqual({ ok: false, message: retypeSecret });
    expect((await testSavedConnection(t.db, orgId, id, { config: moved, secret: "crm-token" })).message).toMatch(/^The CRM has no records API under/);
    await expect(updateConnection(t.db, orgId, id, { config: { baseUrl: "https://elsewhere.example.net" } }, "test")).rejects.toThrow(retypeSecret);
    expect((await updateConnection(t.db, orgId, id, { config: { baseUrl: crm.baseUrl, timeoutMs: 5_000 } }, "test")).name).toBe("crm-saved");
    await expect(testSavedConnection(t.db, otherOrgId, id)).rejects.toBeInstanceOf(ConnectionNotFoundError);
  });
});

describe("adding, renaming and deleting", () => {
  const flow = (connection: string) =>
    parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "send", kind: "send_email", config: { connection, to: "{{input.email}}", subject: "Hi", text: "Hello" } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "send" },
        { from: "send", to: "e" },
      ],
    });

  it("add refuses settings that do not fit the kind, every problem a sentence", async () => {
    const error = await addConnection(t.db, { orgId, kind: "smtp", name: "Bad Name", config: { host: "h", port: 0, from: "x@y.z" }, secret: null }).catch((e) => e);
    expect(error).toBeInstanceOf(ConnectionConfigError);
    expect(error.message).toBe("Port: must be a whole number between 1 and 65535");
    const named = await addConnection(t.db, { orgId, kind: "smtp", name: "Bad Name", config: { host: "h", from: "x@y.z" }, secret: null }).catch((e) => e);
    expect(named.message).toMatch(/^Name: use lowercase letters/);
    const literal = await addConnection(t.db, { orgId, kind: "crm", name: "meta", config: { baseUrl: "http://169.254.169.254/" }, secret: "x" }).catch((e) => e);
    expect(literal.message).toMatch(/^Holdfast does not connect to 169\.254\.169\.254: .*link-local/);
  });

  it("rename and delete are refused while a runnable published version names the connection, naming it; allowed once nothing can reach it", async () => {
    const id = await addConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "a@acme.test" }, secret: null });
    const v1 = await publish(t.db, flow("mail"), { automation: "nurture" });
    expect((await listConnections(t.db, orgId)).find((c) => c.name === "mail")?.usedBy).toEqual([
      { automationId: v1.automationId, automationName: "nurture", version: 1, latest: true, running: 0 },
    ]);

    const renamed = await updateConnection(t.db, orgId, id, { name: "mailbox" }, "test").catch((e) => e);
    expect(renamed).toBeInstanceOf(ConnectionInUseError);
    expect(renamed.message).toBe(
      '"mail" cannot be renamed while automation "nurture" version 1 uses it: published versions find their connections by name. Add a connection with the new name instead, publish versions that use it, then delete "mail".',
    );
    const deleted = await deleteConnection(t.db, orgId, id).catch((e) => e);
    expect(deleted.message).toBe(
      '"mail" cannot be deleted while automation "nurture" version 1 uses it: publish a version that uses another connection, then delete it.',
    );
    // Settings and the secret may change while it is in use.
    expect(await updateConnection(t.db, orgId, id, { config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "b@acme.test" }, secret: "pw" }, "test")).toEqual({
      name: "mail",
      resumed: 0,
      note: null,
    });

    // v2 uses another connection, but a run is still running on v1: still refused, and the sentence says why.
    await addConnection(t.db, { orgId, kind: "smtp", name: "mail2", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "a@acme.test" }, secret: null });
    await t.sql.query("INSERT INTO runs (org_id, automation_id, version_id, start_key, input) VALUES ($1, $2, $3, 'k1', '{}')", [orgId, v1.automationId, v1.versionId]);
    await publish(t.db, flow("mail2"), { automation: "nurture" });
    expect((await deleteConnection(t.db, orgId, id).catch((e) => e)).message).toBe(
      '"mail" cannot be deleted while automation "nurture" version 1 (1 run still running on it) uses it: publish a version that uses another connection and let the runs on older versions finish, then delete it.',
    );
    await t.sql.query("UPDATE runs SET status = 'completed', finished_at = now() WHERE start_key = 'k1'");

    // A draft still names it: the rename goes through and says so.
    const draft = await getDraft(t.db, orgId, v1.automationId);
    await saveDraft(t.db, orgId, v1.automationId, flow("mail"), draft.revision, "test");
    expect(await updateConnection(t.db, orgId, id, { name: "mailbox" }, "test")).toEqual({
      name: "mailbox",
      resumed: 0,
      note: 'The draft of "nurture" still names "mail": pick "mailbox" in its steps before publishing.',
    });
    const taken = await updateConnection(t.db, orgId, id, { name: "mail2" }, "test").catch((e) => e);
    expect(taken.message).toBe('a connection named "mail2" already exists in this organisation; pick another name or edit that one');
    await expect(deleteConnection(t.db, otherOrgId, id)).rejects.toBeInstanceOf(ConnectionNotFoundError);
    await expect(updateConnection(t.db, otherOrgId, id, { name: "stolen" }, "test")).rejects.toBeInstanceOf(ConnectionNotFoundError);
    expect(await deleteConnection(t.db, orgId, id)).toEqual({ name: "mailbox", note: null });
    expect((await t.sql.query("SELECT count(*)::int AS n FROM connections WHERE id = $1", [id])).rows).toEqual([{ n: 0 }]);
  });
});

describe("http_request with an HTTP API connection", () => {
  const graphs = new GraphCache();
  const log = createLogger("test", "silent");
  let n = 0;

  async function runStep(url: string, connection: string) {
    await publish(
      t.db,
      parseGraph({
        nodes: [
          { id: "t", kind: "trigger", config: { eventIdField: "id" } },
          { id: "call", kind: "http_request", config: { url, method: "POST", connection, headers: { "x-api-key": "plain text that loses" } } },
          { id: "e", kind: "end" },
        ],
        edges: [
          { from: "t", to: "call" },
          { from: "call", to: "e" },
        ],
      }),
      { automation: "api" },
    );
    const { runId } = await startRun(t.db, {
      orgSlug: "acme",
      automationSlug: "api",
      rawBody: "{}",
      body: { id: `h${++n}` },
      headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
      via: "test",
      auth: { kind: "operator" },
    });
    const [step] = (await t.sql.query("SELECT id FROM steps WHERE run_id = $1", [runId])).rows;
    await new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 3_000, heartbeatMs: 1_000 }, log }).run(step.id);
    return (await t.sql.query("SELECT status, output, error FROM steps WHERE id = $1", [step.id])).rows[0];
  }

  it("sends the connection's header (replacing a plain one of the same name), and never to an address outside its base URL", async () => {
    await addConnection(t.db, { orgId, kind: "http", name: "api", config: { header: "X-Api-Key", baseUrl: targets.httpBaseUrl }, secret: targets.httpValue });
    expect(await runStep(`${targets.httpBaseUrl}/leads`, "api")).toMatchObject({ status: "done", output: { status: 200 } });
    const before = targets.calls.length;
    expect(await runStep(`${targets.origin}/elsewhere`, "api")).toMatchObject({
      status: "failed",
      error: { code: "credential_not_for_url", message: `connection "api" only sends its credential to addresses under ${targets.httpBaseUrl}, not to ${targets.origin}/elsewhere` },
    });
    expect(targets.calls.length).toBe(before);
  });
});
