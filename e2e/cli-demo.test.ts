import { ensurePublished } from "@holdfast/cli/seed";
import { parseGraph } from "@holdfast/core/versions";
import { InvalidDraftError } from "@holdfast/core/run";
import { createTestDatabase, runCli, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The CLI's first impressions: `holdfast --help` is an answer, not a failure; the demo seeded for a web app on
 * another PORT calls that app's echo endpoint (and prints a trigger URL on that port), so its first run works.
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
  runCli(t.url, args, { PORT: undefined, DEMO_ECHO_URL: undefined, HOLDFAST_PUBLIC_URL: undefined, ...env });

describe("holdfast --help and the demo's port", () => {
  it("--help, -h and help print the usage on stdout and exit 0; a wrong command still exits 64 with the usage", () => {
    for (const args of [["--help"], ["-h"], ["help"], ["runs", "--help"]]) {
      const out = cli(args);
      expect({ args, status: out.status, stderr: out.stderr }).toEqual({ args, status: 0, stderr: "" });
      expect(out.stdout).toMatch(/^usage: holdfast <command> \[options\]/);
    }
    const wrong = cli(["no-such-command"]);
    expect(wrong.status).toBe(64);
    expect(wrong.stderr).toMatch(/unknown command "no-such-command"/);
    expect(wrong.stderr).toContain("usage: holdfast");
    const none = cli([]);
    expect(none.status).toBe(64);
    expect(none.stderr).toContain("usage: holdfast");
  });

  it("a database it cannot use is one line naming the database and what to do (exit 69), never the driver's stack; a wrong command needs no database", () => {
    const key = { HOLDFAST_SECRET_KEY: "ab".repeat(32) };
    const url = new URL(t.url);
    const cases: [string, string, RegExp][] = [
      ["no such database", `postgres://postgres@${url.host}/holdfast_no_such_db`, /^holdfast: the database "holdfast_no_such_db" at .+ does not exist: run `pnpm holdfast migrate` \(it creates it\), or check DATABASE_URL\n$/],
      ["nothing listening", "postgres://postgres@127.0.0.1:1/holdfast", /^holdfast: cannot reach the database "holdfast" at 127\.0\.0\.1:1: is PostgreSQL running there\? Start it, or check DATABASE_URL\n$/],
      ["no such role", `postgres://nobody_here:pw@${url.host}/postgres`, /^holdfast: the database "postgres" at .+ refused the user or password in DATABASE_URL: check them/],
    ];
    for (const [what, databaseUrl, said] of cases) {
      const out = cli(["runs", "list"], { ...key, DATABASE_URL: databaseUrl });
      expect({ what, status: out.status }).toEqual({ what, status: 69 });
      expect(out.stderr, what).toMatch(said);
      expect(out.stderr, what).not.toMatch(/at .+\.(ts|js|mjs):\d+|Prisma|DriverAdapterError/);
    }
    const wrong = cli(["frobnicate"], { DATABASE_URL: "postgres://postgres@127.0.0.1:1/holdfast" });
    expect(wrong.status).toBe(64);
    expect(wrong.stderr).toMatch(/^holdfast: unknown command "frobnicate"/);
  });

  it("seeds the demo's echo URL and prints its trigger URL on PORT", async () => {
    // As in `pnpm start`, the seed runs before the egress exception for the app's own port is set.
    const seed = cli(["seed"], { PORT: "3456", HOLDFAST_EGRESS_ALLOW: undefined });
    expect(seed.stderr).toBe("");
    expect(seed.status).toBe(0);
    expect(seed.stdout).toMatch(/its trigger URL: http:\/\/localhost:3456\/api\/hooks\/demo\/demo-follow-up/);
    const { rows } = await t.sql.query(
      "SELECT n->'config'->>'url' AS url FROM automation_versions v, jsonb_array_elements(v.graph->'nodes') n WHERE n->>'id' = 'notify_crm'",
    );
    expect(rows).toEqual([{ url: "http://127.0.0.1:3456/api/demo/echo" }]);
    // An explicit DEMO_ECHO_URL still wins (a new version of the demo, as every `pnpm start` keeps it current).
    expect(cli(["seed"], { PORT: "3456", DEMO_ECHO_URL: "http://127.0.0.1:4000/api/demo/echo" }).status).toBe(0);
    const latest = await t.sql.query(
      "SELECT n->'config'->>'url' AS url FROM automation_versions v, jsonb_array_elements(v.graph->'nodes') n WHERE n->>'id' = 'notify_crm' ORDER BY v.version DESC LIMIT 1",
    );
    expect(latest.rows).toEqual([{ url: "http://127.0.0.1:4000/api/demo/echo" }]);
  });

  it("the seed publishes through Publish's checks: a graph Publish refuses is refused with the same problems and writes no version", async () => {
    const graph = parseGraph({
      nodes: [
        { id: "start", kind: "trigger", config: { eventIdField: "id" } },
        { id: "tell_crm", kind: "http_request", config: { url: "https://crm.example.com/hook", method: "POST", connection: "crm" } },
        { id: "done", kind: "end" },
      ],
      edges: [
        { from: "start", to: "tell_crm" },
        { from: "tell_crm", to: "done" },
      ],
    });
    const refused = await ensurePublished(t.db, { orgSlug: "seeded", orgName: "Seeded", automationSlug: "needs-crm", automationName: "Needs CRM", graph }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidDraftError);
    expect((refused as InvalidDraftError).problems).toContainEqual({
      path: "node:tell_crm.config.connection",
      message: 'there is no connection named "crm" in this organisation; add it in Settings -> Connections or pick another',
    });
    const { rows } = await t.sql.query("SELECT count(*)::int AS n FROM automations a JOIN automation_versions v ON v.automation_id = a.id WHERE a.slug = 'needs-crm'");
    expect(rows).toEqual([{ n: 0 }]);
  });
});
