import { addMember, type CrmTarget, lineGraph, publish, type SmtpTarget, screenshots, sessionCookieFor, signedInPage, startCrmTarget, startSmtpTarget, startTestDeployment, type TestDeployment, testPassword, trpcCall, trpcData } from "@holdfast/testkit";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectionTargets, startConnectionTargets } from "../packages/testkit/src/connection-targets";

/**
 * Settings -> Connections through the built web app and real servers: a local SMTP server with a login, a CRM, an
 * OpenAI-compatible /models, Slack's auth.test and an HTTP API. For every kind, Test connection is green with the
 * right secret and red, in words, with a wrong one (before saving and after); rename and delete are refused while a
 * published version uses the connection; another organisation's owner reaches nothing. Chromium fills the typed
 * form (no JSON anywhere) and leaves screenshots in e2e/artifacts/connections-*.png.
 */
let d: TestDeployment;
let smtp: SmtpTarget;
let crm: CrmTarget;
let targets: ConnectionTargets;
let sam = "";
let bob = "";
const password = testPassword;
const trpc = (cookie: string, path: string, input: unknown, type: "query" | "mutation" = "mutation") => trpcCall(d.web.base, cookie, path, input, type);
const data = trpcData;

const graph = (connection: string) =>
  lineGraph({ id: "t", kind: "trigger", config: { eventIdField: "id" } }, { id: "send", kind: "send_email", config: { connection, to: "{{input.email}}", subject: "Hi", text: "Hello" } }, { id: "e", kind: "end" });

beforeAll(async () => {
  d = await startTestDeployment();
  smtp = d.closeAtStop(await startSmtpTarget({ credentials: { user: "sam@acme.test", pass: "mail password" } }));
  crm = d.closeAtStop(await startCrmTarget(["crm-token"]));
  targets = d.closeAtStop(await startConnectionTargets());
  const { orgId } = await publish(d.t.db, graph("mail"), { automation: "nurture" });
  const other = await publish(d.t.db, graph("theirs"), { org: "other", automation: "theirs" });
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "owner");
  await addMember(d.t.db, orgId, "vic@acme.test", "Vic", "viewer");
  await addMember(d.t.db, other.orgId, "bob@other.test", "Bob", "owner");
  await d.startWeb({ LOG_LEVEL: "warn" });
  sam = await sessionCookieFor(d.t.db, "sam@acme.test", password);
  bob = await sessionCookieFor(d.t.db, "bob@other.test", password);
}, 300_000);

afterAll(async () => d?.stop());

/** A sentence for a person: no stack, no zod or library wording, no JSON. */
const readable = (message: string) => {
  expect(message).toMatch(/^[A-Z"0-9]/);
  expect(message).not.toMatch(/Invalid input|ZodError|expected \w+, received|\{"|at \w+ \(|TypeError|undefined/);
};

describe("Test connection for every kind, before and after saving", () => {
  const kinds = () =>
    [
      {
        kind: "smtp",
        name: "mail",
        config: { host: "127.0.0.1", port: smtp.port, tls: "none", user: "sam@acme.test", from: "Sam <sam@acme.test>" },
        right: "mail password",
        green: `Logged in to 127.0.0.1:${smtp.port} as sam@acme.test.`,
        red: /^The server refused the user name or password: check them and save again \(the server said: 535/,
      },
      {
        kind: "model",
        name: "writer",
        config: { baseUrl: targets.modelBaseUrl, model: "gpt-4o-mini", inputMicrosPerMTok: 150_000, outputMicrosPerMTok: 600_000 },
        right: targets.modelKey,
        green: /^Logged in to 127\.0\.0\.1:\d+: the key works and "gpt-4o-mini" is available\.$/,
        red: /^The model's API refused the key: check the API key and save again \(it answered 401: Incorrect API key provided\)\.$/,
      },
      {
        kind: "crm",
        name: "sales-crm",
        config: { baseUrl: crm.baseUrl },
        right: "crm-token",
        green: /^Logged in to the CRM at 127\.0\.0\.1:\d+: the API token works\.$/,
        red: /^The CRM refused the API token: check it and save again \(it answered 401: invalid token\)\.$/,
      },
      {
        kind: "slack",
        name: "slack",
        config: { teamId: targets.slackTeamId, apiUrl: targets.slackApiUrl },
        right: targets.slackToken,
        green: 'Logged in to Slack workspace "Acme" as holdfast.',
        red: /^Slack refused the bot token: check it \(it starts with xoxb-\) and save again \(Slack said: invalid_auth\)\.$/,
      },
      {
        kind: "http",
        name: "leads-api",
        config: { header: targets.httpHeader, baseUrl: targets.httpBaseUrl },
        right: targets.httpValue,
        green: /^Reached 127\.0\.0\.1:\d+ with the X-Api-Key header: it answered 200\.$/,
        red: /^127\.0\.0\.1:\d+ refused the credential: check the X-Api-Key header's value and save again \(it answered 401\)\.$/,
      },
    ] as const;

  it("green with the right secret and red with a readable reason for a wrong one, for smtp, model, crm, slack and http", async () => {
    for (const k of kinds()) {
      // Unsaved: the form's values, typed before saving.
      const wrong = await data<{ ok: boolean; message: string }>(trpc(sam, "connections.test", { orgSlug: "acme", kind: k.kind, config: k.config, secret: "wrong secret" }));
      expect(wrong.ok, `${k.kind} wrong secret`).toBe(false);
      expect(wrong.message, k.kind).toMatch(k.red);
      readable(wrong.message);
      const right = await data<{ ok: boolean; message: string }>(trpc(sam, "connections.test", { orgSlug: "acme", kind: k.kind, config: k.config, secret: k.right }));
      expect(right, k.kind).toEqual({ ok: true, message: typeof k.green === "string" ? k.green : expect.stringMatching(k.green) });

      // Saved: its stored secret, which never comes back.
      const { id } = await data<{ id: string; message: string }>(trpc(sam, "connections.create", { orgSlug: "acme", kind: k.kind, name: k.name, config: k.config, secret: k.right }));
      expect((await data<{ ok: boolean }>(trpc(sam, "connections.test", { orgSlug: "acme", connectionId: id }))).ok, k.kind).toBe(true);
      const typedWrong = await data<{ ok: boolean; message: string }>(trpc(sam, "connections.test", { orgSlug: "acme", connectionId: id, secret: "wrong secret" }));
      expect(typedWrong.message, k.kind).toMatch(k.red);
    }
    expect(smtp.received).toHaveLength(0);
    expect(crm.records.size).toBe(0);
    const listed = await data<{ name: string; label: string; summary: string; hasSecret: boolean; usedBy: { automationName: string; version: number }[] }[]>(
      trpc(sam, "connections.list", { orgSlug: "acme" }, "query"),
    );
    expect(listed.map((c) => [c.name, c.label, c.hasSecret])).toEqual([
      ["leads-api", "HTTP API", true],
      ["mail", "Email (SMTP)", true],
      ["sales-crm", "CRM", true],
      ["slack", "Slack", true],
      ["writer", "AI model (OpenAI-compatible)", true],
    ]);
    expect(listed.find((c) => c.name === "mail")?.usedBy).toEqual([expect.objectContaining({ automationName: "nurture", version: 1 })]);
    expect(JSON.stringify(listed)).not.toMatch(/mail password|crm-token|sk-test-model|xoxb-test-token|key-123|v1:/);
  });

  it("settings that do not fit are refused as sentences naming the field; a duplicate name too", async () => {
    const bad = await trpc(sam, "connections.create", { orgSlug: "acme", kind: "smtp", name: "mail-2", config: { host: "smtp.example.com", port: 70000, from: "sam" } });
    expect(bad).toMatchObject({ ok: false, code: "BAD_REQUEST" });
    expect(bad.ok ? "" : bad.message).toBe('Port: must be a whole number between 1 and 65535; From address: must be an email address, e.g. "Sam at Acme <sam@acme.com>"');
    const secretless = await trpc(sam, "connections.create", { orgSlug: "acme", kind: "crm", name: "crm-2", config: { baseUrl: crm.baseUrl } });
    expect(secretless.ok ? "" : secretless.message).toBe("API token: is required");
    const duplicate = await trpc(sam, "connections.create", { orgSlug: "acme", kind: "crm", name: "sales-crm", config: { baseUrl: crm.baseUrl }, secret: "x" });
    expect(duplicate).toMatchObject({ ok: false, code: "CONFLICT", message: 'a connection named "sales-crm" already exists in this organisation; pick another name or edit that one' });
  });
});

describe("rename and delete while a published version uses the connection", () => {
  it("are refused, naming the automation and version; allowed for an unused one", async () => {
    const listed = await data<{ id: string; name: string }[]>(trpc(sam, "connections.list", { orgSlug: "acme" }, "query"));
    const mail = listed.find((c) => c.name === "mail")?.id as string;
    const rename = await trpc(sam, "connections.update", { orgSlug: "acme", connectionId: mail, name: "mailbox" });
    expect(rename).toMatchObject({
      ok: false,
      code: "CONFLICT",
      message:
        '"mail" cannot be renamed while automation "nurture" version 1 uses it: published versions find their connections by name. Add a connection with the new name instead, publish versions that use it, then delete "mail".',
    });
    const del = await trpc(sam, "connections.delete", { orgSlug: "acme", connectionId: mail });
    expect(del).toMatchObject({
      ok: false,
      code: "CONFLICT",
      message: '"mail" cannot be deleted while automation "nurture" version 1 uses it: publish a version that uses another connection, then delete it.',
    });
    // A new secret while in use is fine (a reconnect).
    expect(await data(trpc(sam, "connections.update", { orgSlug: "acme", connectionId: mail, secret: "mail password" }))).toEqual({ name: "mail", resumed: 0, message: 'Saved "mail".' });

    const api = listed.find((c) => c.name === "leads-api")?.id as string;
    expect(await data(trpc(sam, "connections.update", { orgSlug: "acme", connectionId: api, name: "crm-api" }))).toEqual({ name: "crm-api", resumed: 0, message: 'Saved "crm-api".' });
    expect(await data(trpc(sam, "connections.delete", { orgSlug: "acme", connectionId: api }))).toEqual({ name: "crm-api", message: 'Deleted "crm-api".' });
  });
});

describe("organisations and roles", () => {
  it("another organisation's owner reaches nothing, by slug or by id; a viewer may list but not change or test", async () => {
    const listed = await data<{ id: string; name: string }[]>(trpc(sam, "connections.list", { orgSlug: "acme" }, "query"));
    const mail = listed.find((c) => c.name === "mail")?.id as string;
    const before = (await d.t.sql.query("SELECT name, config, secret FROM connections ORDER BY id")).rows;
    for (const slug of ["acme", "other"]) {
      for (const [path, input] of [
        ["connections.update", { connectionId: mail, name: "stolen", secret: "stolen" }],
        ["connections.delete", { connectionId: mail }],
        ["connections.test", { connectionId: mail }],
      ] as const) {
        const r = await trpc(bob, path, { orgSlug: slug, ...input });
        expect(r, `${path} via ${slug}`).toMatchObject({ ok: false, code: "NOT_FOUND" });
      }
    }
    const viaAcme = await trpc(bob, "connections.list", { orgSlug: "acme" }, "query");
    expect(viaAcme).toMatchObject({ ok: false, code: "NOT_FOUND" });
    expect(await data(trpc(bob, "connections.list", { orgSlug: "other" }, "query"))).toEqual([]);
    const vic = await sessionCookieFor(d.t.db, "vic@acme.test", password);
    expect((await data<unknown[]>(trpc(vic, "connections.list", { orgSlug: "acme" }, "query"))).length).toBe(4);
    for (const [path, input] of [
      ["connections.create", { kind: "crm", name: "x", config: { baseUrl: crm.baseUrl }, secret: "x" }],
      ["connections.update", { connectionId: mail, name: "x" }],
      ["connections.delete", { connectionId: mail }],
      ["connections.test", { connectionId: mail }],
    ] as const) {
      expect(await trpc(vic, path, { orgSlug: "acme", ...input }), path).toMatchObject({ ok: false, code: "FORBIDDEN" });
    }
    expect((await d.t.sql.query("SELECT name, config, secret FROM connections ORDER BY id")).rows).toEqual(before);
  });
});

describe("the connection form in Chromium", () => {
  let browser: Browser;
  const shot = screenshots("connections");
  beforeAll(async () => {
    browser = await d.launchBrowser();
  });

  it("adds a mailbox through the typed form: required marks, Test connection red then green before saving, save, edit, refused delete", async () => {
    const page = await signedInPage(browser, d.web.base, "sam@acme.test", { viewport: { width: 1280, height: 900 } });
    await page.goto(`${d.web.base}/settings`);
    await page.getByRole("button", { name: "Add connection" }).click();
    await page.locator('button.kind-card[data-kind="smtp"]').waitFor();
    await shot(page, "pick-kind");
    await page.locator('button.kind-card[data-kind="smtp"]').click();

    const form = page.locator("form.connection-form");
    // Save with nothing filled in: every required field says what it needs, in words.
    await form.getByRole("button", { name: "Save connection" }).click();
    await form.locator(".field-error").first().waitFor();
    expect(await form.locator(".field-error").allTextContents()).toEqual(["is required", "is required", "is required"]);
    await form.getByLabel("Name", { exact: true }).fill("mailbox");
    await form.getByLabel("Server", { exact: true }).fill("127.0.0.1");
    await form.getByLabel("Port", { exact: true }).fill(String(smtp.port));
    await form.getByLabel("Security", { exact: true }).selectOption("none");
    await form.getByLabel("User name", { exact: true }).fill("sam@acme.test");
    await form.getByLabel("From address", { exact: true }).fill("Sam at Acme <sam@acme.test>");
    await form.getByLabel("Password", { exact: true }).fill("not the password");
    expect(await form.locator("textarea").count()).toBe(0); // no JSON field anywhere

    await form.getByRole("button", { name: "Test connection" }).click();
    const result = form.locator(".test-result");
    await result.waitFor();
    expect(await result.getAttribute("data-ok")).toBe("false");
    expect(await result.textContent()).toMatch(/^✗ The server refused the user name or password: check them and save again/);
    await shot(page, "form-test-red");

    await form.getByLabel("Password", { exact: true }).fill("mail password");
    await form.getByRole("button", { name: "Test connection" }).click();
    await form.locator('.test-result[data-ok="true"]').waitFor();
    expect(await result.textContent()).toBe(`✓ Logged in to 127.0.0.1:${smtp.port} as sam@acme.test.`);
    await shot(page, "form-test-green");

    await form.getByRole("button", { name: "Save connection" }).click();
    await page.locator('[data-flash="ok"]', { hasText: 'Saved "mailbox".' }).waitFor();
    const row = page.locator('tr[data-connection="mailbox"]');
    expect(await row.textContent()).toContain(`127.0.0.1:${smtp.port} as sam@acme.test, from Sam at Acme <sam@acme.test>`);
    await shot(page, "list");

    // Edit: prefilled except the secret, which says it is saved.
    await row.getByRole("button", { name: "Edit" }).click();
    expect(await form.getByLabel("Server", { exact: true }).inputValue()).toBe("127.0.0.1");
    expect(await form.getByLabel("Password", { exact: true }).inputValue()).toBe("");
    expect(await form.getByLabel("Password", { exact: true }).getAttribute("placeholder")).toBe("saved – type to replace");
    await form.getByRole("button", { name: "Test connection" }).click();
    await form.locator('.test-result[data-ok="true"]').waitFor();
    await shot(page, "edit");
    await form.getByRole("button", { name: "Cancel" }).click();

    // Deleting a connection a published version uses: refused, naming the version.
    page.on("dialog", (d) => d.accept());
    await page.locator('tr[data-connection="mail"]').getByRole("button", { name: "Delete" }).click();
    const refused = page.locator('[data-flash="error"]');
    await refused.waitFor();
    expect(await refused.textContent()).toBe('"mail" cannot be deleted while automation "nurture" version 1 uses it: publish a version that uses another connection, then delete it.');
    await shot(page, "delete-refused");
    await page.close();
  });
});
