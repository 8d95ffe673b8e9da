import { createTestDatabase, httpChainGraph, publish, runCli, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await publish(t.db, httpChainGraph("http://127.0.0.1:9/x", 1));
});
afterAll(async () => {
  await t?.drop();
});

const cli = (args: string[], env: Record<string, string> = {}) => runCli(t.url, args, env);

describe("holdfast connections, budgets, contacts", () => {
  it("adds a connection with its secret from the environment, shows it without the secret, and reconnects it", () => {
    const add = cli(["connections", "add", "acme", "smtp", "mailbox", "--config", '{"host":"127.0.0.1","from":"a@acme.test"}', "--limits", '{"maxConcurrent":2}', "--secret-env", "MAILBOX_PASSWORD"], {
      MAILBOX_PASSWORD: "hunter2",
    });
    expect(add.stderr).toBe("");
    expect(add.stdout).toMatch(/connection mailbox \(smtp\) added: cnx_/);
    const show = cli(["connections", "show", "acme", "mailbox"]);
    expect(show.stdout).toContain('"secret": "(set, encrypted)"');
    expect(show.stdout).not.toContain("hunter2");
    expect(show.stdout).toContain('"maxConcurrent": 2');
    const again = cli(["connections", "reconnect", "acme", "mailbox", "--secret-env", "NEW_PASSWORD"], { NEW_PASSWORD: "hunter3" });
    expect(again.stdout).toMatch(/reconnected; 0 parked steps resumed/);
  });

  it("refuses bad input with a clear message and changes nothing", async () => {
    const noSecret = cli(["connections", "reconnect", "acme", "mailbox", "--secret-env", "UNSET_VAR"]);
    expect(noSecret.status).not.toBe(0);
    expect(noSecret.stderr).toMatch(/UNSET_VAR is empty/);
    const badLimits = cli(["connections", "add", "acme", "crm", "crm", "--config", "{}", "--limits", '{"maxConcurrent":0}']);
    expect(badLimits.status).not.toBe(0);
    expect(badLimits.stderr).toMatch(/maxConcurrent/);
    const badKind = cli(["connections", "add", "acme", "ftp", "x"]);
    expect(badKind.status).not.toBe(0);
    const { rows } = await t.sql.query("SELECT count(*)::int AS n FROM connections");
    expect(rows[0].n).toBe(1);
  });

  it("sets and shows the model budget, and unsubscribes then erases a contact", () => {
    expect(cli(["budgets", "set", "acme", "12.5"]).stdout).toMatch(/model budget set to 12.5 USD; 0 parked steps resumed/);
    expect(cli(["budgets", "show", "acme"]).stdout).toMatch(/allowed 12.5 USD, reserved 0, spent 0/);
    expect(cli(["budgets", "set", "acme", "lots"]).status).not.toBe(0);
    expect(cli(["contacts", "unsubscribe", "acme", "Maya@Example.com"]).stdout).toMatch(/unsubscribed and suppressed/);
    expect(cli(["contacts", "erase", "acme", "maya@example.com"]).stdout).toMatch(/"found":false/);
  });
});
