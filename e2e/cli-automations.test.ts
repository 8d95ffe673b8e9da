import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, runCli, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let t: TestDatabase;
let dir: string;
beforeAll(async () => {
  t = await createTestDatabase();
  await t.sql.query("INSERT INTO organisations (slug, name) VALUES ('acme', 'Acme')");
  dir = mkdtempSync(join(tmpdir(), "holdfast-cli-automations-"));
});
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await t?.drop();
});

const cli = (args: string[]) => runCli(t.url, args);
let files = 0;
const file = (content: unknown) => {
  const path = join(dir, `graph-${++files}.json`);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
};
const q = async (sql: string, params: unknown[] = []) => (await t.sql.query(sql, params)).rows;
const versions = async (slug: string) =>
  (await q("SELECT v.version FROM automation_versions v JOIN automations a ON a.id = v.automation_id WHERE a.slug = $1 ORDER BY v.version", [slug])).map(
    (r) => r.version,
  );

const graph = (url: string) => ({
  nodes: [
    { id: "signup", kind: "trigger", config: { eventIdField: "id" } },
    { id: "call", kind: "http_request", config: { url } },
    { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: 60 } } },
    { id: "done", kind: "end" },
  ],
  edges: [
    { from: "signup", to: "call" },
    { from: "call", to: "pause" },
    { from: "pause", to: "done" },
  ],
});

describe("holdfast automations publish / export", () => {
  it("creates the automation (with its trigger credentials) on the first publish, then publishes only a changed graph", async () => {
    const first = cli(["automations", "publish", "acme", "welcome", file(graph("https://crm.example.com/a")), "--name", "Welcome"]);
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    expect(first.stdout).toBe("published acme/welcome as version 1\n");
    expect(await q("SELECT name FROM automations WHERE slug = 'welcome'")).toEqual([{ name: "Welcome" }]);
    expect(
      await q("SELECT kind FROM trigger_credentials c JOIN automations a ON a.id = c.automation_id WHERE a.slug = 'welcome' ORDER BY kind"),
    ).toEqual([{ kind: "signing_secret" }, { kind: "url_token" }]);
    expect(await q("SELECT published_by FROM automation_versions")).toEqual([{ published_by: expect.stringMatching(/^cli:/) }]);

    const same = cli(["automations", "publish", "acme", "welcome", file(graph("https://crm.example.com/a"))]);
    expect(same.status).toBe(0);
    expect(same.stdout).toBe("acme/welcome version 1 already has this graph; nothing published\n");
    // The same graph written differently (keys reordered, defaults spelled out) is still the same graph.
    const spelled = graph("https://crm.example.com/a");
    spelled.nodes[1] = { config: { method: "POST", url: "https://crm.example.com/a", timeoutMs: 10_000 } as never, kind: "http_request", id: "call" };
    expect(cli(["automations", "publish", "acme", "welcome", file(spelled)]).stdout).toMatch(/version 1 already has this graph; nothing published/);
    expect(await versions("welcome")).toEqual([1]);

    const changed = cli(["automations", "publish", "acme", "welcome", file(graph("https://crm.example.com/b"))]);
    expect(changed.status).toBe(0);
    expect(changed.stdout).toBe("published acme/welcome as version 2\n");
    expect(await versions("welcome")).toEqual([1, 2]);
    // Publishing leaves the editor's draft at the published graph, as the editor's own Publish does.
    const [draft] = await q("SELECT d.graph FROM automation_drafts d JOIN automations a ON a.id = d.automation_id WHERE a.slug = 'welcome'");
    expect(draft.graph.nodes[1].config.url).toBe("https://crm.example.com/b");
  });

  it("refuses a graph the editor's Publish refuses: exit 65, one line per problem naming the node and the field", async () => {
    const draftBefore = await q("SELECT d.graph, d.revision FROM automation_drafts d JOIN automations a ON a.id = d.automation_id WHERE a.slug = 'welcome'");

    const dangling = graph("https://crm.example.com/c");
    dangling.edges[2] = { from: "pause", to: "ghost" };
    const structural = cli(["automations", "publish", "acme", "welcome", file(dangling)]);
    expect(structural.status).toBe(65);
    expect(structural.stdout).toBe("");
    expect(structural.stderr).toContain('edge "pause" -> "ghost" (to): no node "ghost"');

    const shape = graph("https://crm.example.com/c");
    shape.nodes[1] = { id: "call", kind: "http_request", config: {} as never };
    shape.nodes[2] = { id: "pause", kind: "wait", config: { rule: { kind: "next_weekday", at: "25:00" } as never } };
    const refused = cli(["automations", "publish", "acme", "welcome", file(shape)]);
    expect(refused.status).toBe(65);
    const lines = refused.stderr.trim().split("\n");
    expect(lines[0]).toBe("holdfast: acme/welcome was not published: the graph has 3 problems");
    expect(lines.slice(1)).toEqual([
      'node "call" (config.url): Required',
      'node "pause" (config.rule.at): a local time as HH:MM',
      'node "pause" (config.zone): a wait until a time of day needs a time zone: pick one, or where the contact\'s zone is in the payload',
    ]);

    // Nothing published, the draft untouched, and a refused first publish creates no automation.
    expect(await versions("welcome")).toEqual([1, 2]);
    expect(await q("SELECT d.graph, d.revision FROM automation_drafts d JOIN automations a ON a.id = d.automation_id WHERE a.slug = 'welcome'")).toEqual(
      draftBefore,
    );
    expect(cli(["automations", "publish", "acme", "never", file(dangling)]).status).toBe(65);
    expect(await q("SELECT count(*)::int AS n FROM automations WHERE slug = 'never'")).toEqual([{ n: 0 }]);
  });

  it("refuses what would fail at run time: a connection the organisation lacks and a step nothing leads to", async () => {
    const g = graph("https://crm.example.com/d");
    g.nodes.splice(3, 0, { id: "mail", kind: "send_email", config: { connection: "nope", subject: "Hi", text: "Hello" } } as never);
    g.nodes.push({ id: "orphan", kind: "wait", config: { rule: { kind: "duration", seconds: 60 } } });
    g.edges[2] = { from: "pause", to: "mail" };
    g.edges.push({ from: "mail", to: "done" }, { from: "orphan", to: "done" });
    const run = cli(["automations", "publish", "acme", "runtime", file(g)]);
    expect(run.status).toBe(65);
    expect(run.stderr.trim().split("\n")).toEqual([
      "holdfast: acme/runtime was not published: the graph has 2 problems",
      'node "orphan": nothing leads to this step from the trigger',
      'node "mail" (config.connection): there is no connection named "nope" in this organisation; add it in Settings -> Connections or pick another',
    ]);
    expect(await q("SELECT count(*)::int AS n FROM automations WHERE slug = 'runtime'")).toEqual([{ n: 0 }]);
  });

  it("a missing file exits 66, a file that is not JSON 65, with a clear sentence", () => {
    const missing = cli(["automations", "publish", "acme", "welcome", join(dir, "nope.json")]);
    expect(missing.status).toBe(66);
    expect(missing.stderr).toMatch(/cannot read the graph file .*nope\.json: there is no such file/);
    const notJson = cli(["automations", "publish", "acme", "welcome", file("{ nodes: [")]);
    expect(notJson.status).toBe(65);
    expect(notJson.stderr).toMatch(/the graph file .*graph-\d+\.json is not JSON/);
  });

  it("exports the newest or a given version as stable JSON that publishes back with no change", async () => {
    const latest = cli(["automations", "export", "acme", "welcome"]);
    expect(latest.status).toBe(0);
    expect(JSON.parse(latest.stdout).nodes[1].config.url).toBe("https://crm.example.com/b");
    expect(latest.stdout).toMatch(/^\{\n {2}"edges": \[/); // pretty, keys sorted
    expect(cli(["automations", "export", "acme", "welcome"]).stdout).toBe(latest.stdout);
    expect(cli(["automations", "publish", "acme", "welcome", file(latest.stdout)]).stdout).toBe(
      "acme/welcome version 2 already has this graph; nothing published\n",
    );

    const v1 = cli(["automations", "export", "acme", "welcome", "--version", "1"]);
    expect(v1.status).toBe(0);
    expect(JSON.parse(v1.stdout).nodes[1].config.url).toBe("https://crm.example.com/a");
    // Version 1 copied into another automation is the same graph there, and publishing it again changes nothing.
    expect(cli(["automations", "publish", "acme", "welcome-copy", file(v1.stdout)]).stdout).toBe("published acme/welcome-copy as version 1\n");
    expect(cli(["automations", "export", "acme", "welcome-copy"]).stdout).toBe(v1.stdout);
    expect(cli(["automations", "publish", "acme", "welcome-copy", file(v1.stdout)]).stdout).toBe(
      "acme/welcome-copy version 1 already has this graph; nothing published\n",
    );
    expect(await versions("welcome")).toEqual([1, 2]);
    expect(await versions("welcome-copy")).toEqual([1]);
  });

  it("says clearly when the automation or the version does not exist", () => {
    const noVersion = cli(["automations", "export", "acme", "welcome", "--version", "9"]);
    expect(noVersion.status).toBe(1);
    expect(noVersion.stderr).toContain("acme/welcome has no published version 9");
    const noAutomation = cli(["automations", "export", "acme", "nope"]);
    expect(noAutomation.status).toBe(1);
    expect(noAutomation.stderr).toContain('automation "acme/nope" not found');
    expect(cli(["automations", "export", "acme", "welcome", "--version", "first"]).status).toBe(64);
  });
});
