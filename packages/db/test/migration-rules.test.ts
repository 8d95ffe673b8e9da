import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { functionsDir, migrationsDir } from "../src/migrate";
import { checkMigration, functionSignatures, previousSchema, statements } from "../src/migration-rules";

/**
 * The expand/contract rules (docs/operations.md, "Upgrading under traffic"), checked statically: every migration
 * newer than release.json's previousRelease, and every stored function that release calls, against that release's
 * source at its commit (`git grep`, `git show`). The dynamic half is the upgrade soak (e2e/soak-upgrade.test.ts): the
 * old processes run while these migrations apply.
 */
const repo = join(migrationsDir, "../..");
const previous = (JSON.parse(readFileSync(join(repo, "release.json"), "utf8")) as { previousRelease: string }).previousRelease;
const git = (...args: string[]) => {
  const r = spawnSync("git", ["-C", repo, ...args], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, out: r.stdout ?? "", err: r.stderr ?? "" };
};

/** Where the previous release's running code names `name`: its apps and packages (not tests) and its Prisma schema. */
function usesOf(name: string): string[] {
  const r = git("grep", "-w", "-i", "-l", "-F", name, previous, "--", "apps", "packages", "prisma/schema.prisma", ":!**/test/**", ":!packages/testkit/**", ":!**/*.test.ts");
  if (r.status !== 0 && r.status !== 1) throw new Error(`git grep failed: ${r.err}`);
  return r.out.split("\n").filter(Boolean);
}

/** What the previous release's schema dump holds: its plain indexes, tables, unique keys and NOT NULL columns. */
const previousDump = () => previousSchema(git("show", `${previous}:prisma/schema.sql`).out);

describe("the migrations newer than the previous release follow the expand/contract rules", () => {
  it("the previous release is in this clone's history", () => {
    expect(git("cat-file", "-t", previous).out.trim(), `release.json's previousRelease ${previous} is not in this clone (a shallow clone? fetch its history)`).toBe("commit");
  });

  const before = new Set(git("ls-tree", "--name-only", `${previous}:prisma/migrations`).out.split("\n").filter(Boolean));
  const newer = readdirSync(migrationsDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && !before.has(d.name))
    .map((d) => d.name)
    .sort();

  it(`each of the ${newer.length} newer migrations breaks nothing the previous release uses`, () => {
    const broken = newer.flatMap((m) => checkMigration(readFileSync(join(migrationsDir, m, "migration.sql"), "utf8"), usesOf, previousDump()).map((v) => ({ migration: m, ...v })));
    expect(broken).toEqual([]);
  });

  it("every stored function the previous release defines keeps its signature (new versions are added beside it)", () => {
    const oldFiles = git("ls-tree", "--name-only", `${previous}:packages/core/src/store/sql/functions`).out.split("\n").filter((f) => f.endsWith(".sql"));
    expect(oldFiles.length).toBeGreaterThan(0);
    const oldSignatures = oldFiles.flatMap((f) => functionSignatures(git("show", `${previous}:packages/core/src/store/sql/functions/${f}`).out));
    const now = new Set(readdirSync(functionsDir).flatMap((f) => functionSignatures(readFileSync(join(functionsDir, f), "utf8"))));
    expect(oldSignatures.filter((s) => !now.has(s))).toEqual([]);
  });
});

describe("the rule check refuses what would break the previous release", () => {
  const schema = previousDump();
  const plain = schema.plainIndexes;
  const refused = (sql: string) => checkMigration(sql, usesOf, schema).map((v) => v.rule);

  it("refuses dropping, renaming or retyping a column the previous release uses, even when called a contract", () => {
    expect(refused(`ALTER TABLE "runs" DROP COLUMN "held_at";`)).toEqual(["drops column held_at of runs"]);
    const contract = checkMigration(`-- contract: held_at\nALTER TABLE "runs" DROP COLUMN "held_at";`, usesOf);
    expect(contract.map((v) => v.rule)).toEqual(["drops column held_at of runs: a contract, but the previous release still uses held_at"]);
    expect(contract[0]?.usedAt).toContain(`${previous}:prisma/schema.prisma`);
    expect(refused(`ALTER TABLE runs RENAME COLUMN held_at TO paused_at;`)).toEqual(["renames column held_at of runs"]);
    expect(refused(`ALTER TABLE runs ALTER COLUMN held_at TYPE timestamp;`)).toEqual(["changes the type of runs.held_at"]);
    expect(refused(`ALTER TABLE runs RENAME TO journeys;`)).toEqual(["renames table runs"]);
    expect(refused(`DROP TABLE "approvals";`)).toEqual(["drops table approvals, which the previous release may still use"]);
  });

  it("lets a migration drop a plain index the previous release reads through for speed only, when it says so; never a unique one", () => {
    expect(plain.has("count_changes_version_idx")).toBe(true);
    const drop = (name: string, note = true) => checkMigration(`${note ? `-- speed only: ${name}\n` : ""}DROP INDEX IF EXISTS "${name}";`, usesOf, { plainIndexes: plain }).map((v) => v.rule);
    expect(drop("count_changes_version_idx")).toEqual([]);
    expect(drop("count_changes_version_idx", false)).toEqual(["drops index count_changes_version_idx, which the previous release may still use"]);
    // A unique index: ON CONFLICT and the keys rely on it, whatever the migration says.
    expect(plain.has("steps_run_id_node_id_iteration_key")).toBe(false);
    expect(drop("steps_run_id_node_id_iteration_key")).toEqual(["drops index steps_run_id_node_id_iteration_key, which the previous release may still use"]);
  });

  it("lets a contract drop what the previous release no longer names anywhere", () => {
    expect(refused(`-- contract: zz_never_used_column (the previous release stopped reading it)\nALTER TABLE runs DROP COLUMN zz_never_used_column;`)).toEqual([]);
    expect(refused(`ALTER TABLE runs DROP COLUMN zz_never_used_column;`)).toEqual(["drops column zz_never_used_column of runs"]);
  });

  it("refuses NOT NULL without a default, constraints without NOT VALID, and dropped functions, indexes and keys", () => {
    expect(refused(`ALTER TABLE runs ADD COLUMN note text;`)).toEqual([]);
    expect(refused(`ALTER TABLE runs ADD COLUMN note text NOT NULL DEFAULT '';`)).toEqual([]);
    expect(refused(`ALTER TABLE runs ADD COLUMN note text NOT NULL;`)).toEqual(["adds runs.note NOT NULL without a default"]);
    expect(refused(`ALTER TABLE runs ALTER COLUMN contact_id SET NOT NULL;`)).toEqual(["makes runs.contact_id NOT NULL"]);
    expect(refused(`ALTER TABLE runs ADD CONSTRAINT runs_note_check CHECK (length(note) < 10);`)).toHaveLength(1);
    expect(refused(`ALTER TABLE runs ADD CONSTRAINT runs_note_check CHECK (length(note) < 10) NOT VALID;`)).toEqual([]);
    expect(refused(`ALTER TABLE runs VALIDATE CONSTRAINT runs_note_check;`)).toEqual([]);
    expect(refused(`ALTER TABLE runs DROP CONSTRAINT runs_held_check;`)).toEqual([]);
    expect(refused(`ALTER TABLE effects DROP CONSTRAINT effects_pkey;`)).toEqual(["drops constraint effects_pkey of effects"]);
    expect(refused(`DROP FUNCTION IF EXISTS holdfast_step_settle(text, int);`)).toEqual(["drops function holdfast_step_settle, which the previous release may still use"]);
    expect(refused(`DROP INDEX "runs_org_status_idx";`)).toHaveLength(1);
    expect(refused(`DROP TRIGGER runs_count_insert ON runs;`)).toHaveLength(1);
    expect(refused(`REVOKE UPDATE ON TABLE runs FROM holdfast_worker;`)).toHaveLength(1);
  });

  it("lets a new table be shaped freely in the migration that creates it", () => {
    const sql = `CREATE TABLE "notes" ("id" text NOT NULL, "body" text NOT NULL);\nALTER TABLE "notes" ADD CONSTRAINT "notes_pkey" PRIMARY KEY ("id");\nALTER TABLE notes ADD CONSTRAINT notes_body_check CHECK (length(body) < 100);`;
    expect(refused(sql)).toEqual([]);
  });

  it("refuses a column dropped or retyped without the COLUMN keyword", () => {
    expect(refused(`ALTER TABLE runs DROP held_at;`)).toEqual(["drops column held_at of runs"]);
    expect(refused(`ALTER TABLE runs DROP IF EXISTS "held_at";`)).toEqual(["drops column held_at of runs"]);
    expect(refused(`ALTER TABLE runs ALTER held_at TYPE timestamp;`)).toEqual(["changes the type of runs.held_at"]);
    expect(refused(`ALTER TABLE runs ALTER held_at SET DATA TYPE timestamp;`)).toEqual(["changes the type of runs.held_at"]);
    expect(refused(`ALTER TABLE runs ALTER COLUMN held_at SET DATA TYPE timestamp USING held_at::timestamp;`)).toEqual(["changes the type of runs.held_at"]);
    expect(refused(`ALTER TABLE runs ADD COLUMN note text, DROP held_at;`)).toEqual(["drops column held_at of runs"]);
    expect(refused(`-- contract: zz_never_used_column\nALTER TABLE runs DROP zz_never_used_column;`)).toEqual([]);
    // DROP CONSTRAINT is not a column named CONSTRAINT: a CHECK may still be dropped.
    expect(refused(`ALTER TABLE runs DROP CONSTRAINT runs_held_check;`)).toEqual([]);
  });

  it("reads schema-qualified and quoted names as their bare name", () => {
    expect(refused(`ALTER TABLE public.runs DROP COLUMN held_at;`)).toEqual(["drops column held_at of runs"]);
    expect(refused(`ALTER TABLE "public"."runs" RENAME TO journeys;`)).toEqual(["renames table runs"]);
    expect(refused(`DROP TABLE IF EXISTS "public"."approvals";`)).toEqual(["drops table approvals, which the previous release may still use"]);
    expect(refused(`DROP FUNCTION public.holdfast_step_settle(text, int);`)).toEqual(["drops function holdfast_step_settle, which the previous release may still use"]);
    expect(refused(`DROP TRIGGER runs_count_insert ON "public"."runs";`).length).toBe(1);
    expect(checkMigration(`DROP TRIGGER runs_count_insert ON public.runs;`, usesOf)[0]?.object).toBe("runs");
    expect(checkMigration(`-- speed only: count_changes_version_idx\nDROP INDEX public.count_changes_version_idx;`, usesOf, { plainIndexes: plain })).toEqual([]);
    expect(refused(`CREATE TABLE public.notes (id text NOT NULL);\nALTER TABLE "public"."notes" ADD CONSTRAINT notes_pkey PRIMARY KEY (id);`)).toEqual([]);
  });

  it("checks every name of a drop list against its own line", () => {
    const both = "DROP INDEX count_changes_version_idx, approvals_notify_idx;";
    expect(plain.has("approvals_notify_idx")).toBe(true);
    expect(refused(`-- speed only: count_changes_version_idx\n${both}`)).toEqual(["drops index approvals_notify_idx, which the previous release may still use"]);
    expect(refused(`-- speed only: count_changes_version_idx, approvals_notify_idx\n${both}`)).toEqual([]);
    expect(refused(`-- contract: zz_never_used_a\nDROP TABLE zz_never_used_a, public.approvals;`)).toEqual(["drops table approvals, which the previous release may still use"]);
    expect(refused(`-- contract: zz_never_used_a, zz_never_used_b\nDROP TABLE IF EXISTS zz_never_used_a, "zz_never_used_b";`)).toEqual([]);
    expect(refused(`DROP FUNCTION holdfast_step_settle(text, int), holdfast_zz_never(text);`)).toHaveLength(2);
  });

  it("refuses a new unique index on a table of the previous release, even one this migration 'creates' IF NOT EXISTS", () => {
    expect(schema.tables.has("runs")).toBe(true);
    expect(refused(`CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS runs_x_key ON public.runs (org_id, status);`)).toEqual(["creates a unique index on runs, which the previous release's writes may break"]);
    expect(refused(`CREATE UNIQUE INDEX ON ONLY runs (org_id);`)).toHaveLength(1);
    expect(refused(`CREATE TABLE IF NOT EXISTS runs (id text);\nCREATE UNIQUE INDEX runs_x_key ON runs (status);\nALTER TABLE runs DROP held_at;`)).toHaveLength(2);
    expect(refused(`CREATE INDEX runs_x_idx ON runs (org_id);`)).toEqual([]);
    expect(refused(`CREATE TABLE notes (id text);\nCREATE UNIQUE INDEX notes_id_key ON notes (id);`)).toEqual([]);
    // A table the previous release does not have, whichever newer migration created it.
    expect(refused(`CREATE UNIQUE INDEX zz_new_table_key ON zz_new_table (id);`)).toEqual([]);
    expect(refused(`-- contract: zz_never_used_table\nCREATE UNIQUE INDEX x_key ON zz_never_used_table (id);`)).toEqual([]);
  });

  it("lets a unique index a key of the previous release implies be made, and be the primary key when its columns are NOT NULL", () => {
    expect(schema.uniqueKeys.get("steps")).toContainEqual(["id"]);
    expect(schema.notNull.get("steps")?.has("org_id")).toBe(true);
    expect(schema.notNull.get("steps")?.has("owner")).toBe(false);
    // Rows unique on id are unique on (id, org_id): the new index refuses no write the previous release makes.
    expect(refused(`CREATE UNIQUE INDEX IF NOT EXISTS "steps_id_org_id_key" ON "steps" ("id", "org_id");`)).toEqual([]);
    expect(refused(`CREATE UNIQUE INDEX steps_x_key ON steps (org_id, node_id);`)).toEqual(["creates a unique index on steps, which the previous release's writes may break"]);
    expect(refused(`CREATE UNIQUE INDEX steps_x_key ON steps (lower(id), org_id);`)).toHaveLength(1);
    const primary = (index: string) => `-- contract: steps_pkey\nALTER TABLE steps DROP CONSTRAINT steps_pkey, ADD CONSTRAINT steps_pkey PRIMARY KEY USING INDEX ${index};`;
    expect(refused(`CREATE UNIQUE INDEX steps_id_org_id_key ON steps (id, org_id);\n${primary("steps_id_org_id_key")}`)).toEqual([]);
    // A primary key makes its columns NOT NULL: owner is nullable in the previous release.
    expect(refused(`CREATE UNIQUE INDEX steps_id_owner_key ON steps (id, owner);\n${primary("steps_id_owner_key")}`)).toEqual(["adds a primary key constraint to steps, which the previous release's writes may break"]);
    // A key from an index this migration does not make is refused as before.
    expect(refused(primary("steps_run_id_node_id_iteration_key"))).toHaveLength(1);
    expect(refused(`ALTER TABLE steps ADD CONSTRAINT steps_x_key UNIQUE USING INDEX steps_run_id_node_id_iteration_key;`)).toHaveLength(1);
    expect(refused(`CREATE UNIQUE INDEX steps_id_owner_key ON steps (id, owner);\nALTER TABLE steps ADD CONSTRAINT steps_x_key UNIQUE USING INDEX steps_id_owner_key;`)).toEqual([]);
    // IF NOT EXISTS of a name the previous schema has makes nothing: the key would take that other index.
    expect(schema.names.has("memberships_org_id_slack_user_id_key")).toBe(true);
    const taken = `-- contract: memberships_pkey\nCREATE UNIQUE INDEX IF NOT EXISTS memberships_org_id_slack_user_id_key ON memberships (org_id, user_id);\nALTER TABLE memberships DROP CONSTRAINT memberships_pkey, ADD CONSTRAINT memberships_pkey PRIMARY KEY USING INDEX memberships_org_id_slack_user_id_key;`;
    expect(refused(taken)).toEqual(["adds a primary key constraint to memberships, which the previous release's writes may break"]);
  });

  it("reads the previous schema's NOT NULL columns table by table, whatever follows a table or fills a CHECK", () => {
    // steps is followed by a WITH (fillfactor) clause and holds a multi-line CHECK; its neighbours' columns are not its own.
    const steps = schema.notNull.get("steps");
    expect(steps?.has("org_id")).toBe(true);
    expect(steps?.has("email")).toBe(false);
    expect(steps?.has("when")).toBe(false);
    expect(schema.notNull.get("suppressions")?.has("email")).toBe(true);
    expect(schema.notNull.get("effects")?.has("key")).toBe(true);
    expect(schema.uniqueKeys.get("memberships")).toContainEqual(["org_id", "user_id"]);
  });

  it("refuses a changed default on an existing column, not on one this migration adds", () => {
    expect(refused(`ALTER TABLE runs ALTER COLUMN status SET DEFAULT 'held';`)).toEqual(["changes the default of runs.status"]);
    expect(refused(`ALTER TABLE runs ALTER status SET DEFAULT 'held';`)).toHaveLength(1);
    expect(refused(`ALTER TABLE runs ADD COLUMN note text;\nALTER TABLE runs ALTER COLUMN note SET DEFAULT '';`)).toEqual([]);
    expect(refused(`ALTER TABLE runs ADD COLUMN note text, ALTER COLUMN note SET DEFAULT '';`)).toEqual([]);
  });

  it("refuses renamed types, values, constraints and indexes, policies, row level security, roles and schemas", () => {
    const cases: [string, number][] = [
      [`ALTER TYPE public.run_status RENAME VALUE 'held' TO 'paused';`, 1],
      [`ALTER TYPE run_status RENAME TO journey_status;`, 1],
      [`ALTER TYPE run_status ADD VALUE 'paused';`, 0],
      [`DROP POLICY IF EXISTS tenant_scope ON public.runs;`, 1],
      [`ALTER POLICY tenant_scope ON runs USING (true);`, 1],
      [`CREATE POLICY narrow ON runs AS RESTRICTIVE TO holdfast_web USING (false);`, 1],
      [`CREATE POLICY wide ON runs AS PERMISSIVE TO holdfast_web USING (true);`, 0],
      [`ALTER TABLE runs DISABLE ROW LEVEL SECURITY;`, 1],
      [`ALTER TABLE runs ENABLE ROW LEVEL SECURITY;`, 1],
      [`ALTER TABLE ONLY public.runs FORCE ROW LEVEL SECURITY;`, 1],
      [`ALTER TABLE runs NO FORCE ROW LEVEL SECURITY;`, 1],
      [`DROP SCHEMA IF EXISTS audit;`, 1],
      [`DROP DOMAIN email_address;`, 1],
      [`DROP EXTENSION pg_trgm;`, 1],
      [`DROP ROLE holdfast_worker, holdfast_web;`, 2],
      [`ALTER ROLE holdfast_web SET statement_timeout = '1s';`, 1],
      [`ALTER TABLE runs RENAME CONSTRAINT runs_pkey TO journeys_pkey;`, 1],
      [`ALTER INDEX IF EXISTS public.runs_org_status_idx RENAME TO runs_status_idx;`, 1],
      [`TRUNCATE runs;`, 1],
      [`TRUNCATE TABLE ONLY runs, public.approvals RESTART IDENTITY;`, 2],
    ];
    expect(cases.map(([sql]) => [sql, refused(sql).length])).toEqual(cases);
    expect(refused(`-- contract: zz_never_used_policy\nDROP POLICY zz_never_used_policy ON runs;`)).toEqual([]);
    expect(refused(`-- contract: zz_never_used_index\nALTER INDEX zz_never_used_index RENAME TO zz_other;`)).toEqual([]);
    const rls = `CREATE TABLE notes (id text);\nALTER TABLE notes ENABLE ROW LEVEL SECURITY;\nALTER TABLE notes FORCE ROW LEVEL SECURITY;\nCREATE POLICY notes_narrow ON notes AS RESTRICTIVE USING (true);`;
    expect(refused(rls)).toEqual([]);
  });

  it("refuses a new trigger on a table of the previous release unless a contract line names the trigger", () => {
    const trigger = (t: string) => `CREATE OR REPLACE TRIGGER zz_never_used_trigger AFTER INSERT OR UPDATE OF status ON ${t} FOR EACH ROW EXECUTE FUNCTION f();`;
    expect(refused(trigger("public.runs"))).toEqual(["creates trigger zz_never_used_trigger on runs, which acts on the previous release's writes"]);
    expect(refused(`-- contract: zz_never_used_trigger\n${trigger("runs")}`)).toEqual([]);
    expect(refused(`CREATE TABLE notes (id text);\n${trigger("notes")}`)).toEqual([]);
  });

  it("refuses any CASCADE on a drop, whatever the lines say", () => {
    expect(refused(`-- contract: zz_never_used_a\nDROP TABLE zz_never_used_a CASCADE;`)).toEqual(["drops table zz_never_used_a with CASCADE, which drops whatever depends on it unnamed"]);
    expect(refused(`-- contract: zz_never_used_column\nALTER TABLE runs DROP COLUMN zz_never_used_column CASCADE;`)).toEqual(["drops from runs with CASCADE, which drops whatever depends on it unnamed"]);
    expect(refused(`-- speed only: count_changes_version_idx\nDROP INDEX count_changes_version_idx CASCADE;`)).toHaveLength(1);
    expect(refused(`-- contract: zz_never_used_a\nTRUNCATE zz_never_used_a CASCADE;`)).toHaveLength(1);
    expect(refused(`-- contract: zz_never_used_a\nDROP TABLE zz_never_used_a RESTRICT;`)).toEqual([]);
  });

  it("refuses a DO block unless a line says a person reviewed it", () => {
    const block = `DO $$ BEGIN EXECUTE 'DROP TABLE runs'; END $$;`;
    expect(refused(block)).toEqual(["runs a DO block, which cannot be checked statically (a person reads it: -- reviewed do-block: <why>)"]);
    expect(refused(`-- reviewed do-block: grants the new table to both roles, drops nothing\n${block}`)).toEqual([]);
    expect(refused(`DO LANGUAGE plpgsql $body$ BEGIN NULL; END $body$;`)).toHaveLength(1);
  });

  it("reads statements apart from comments and function bodies", () => {
    const sql = `-- DROP TABLE runs;\nCREATE FUNCTION f() RETURNS void AS $$ BEGIN DELETE FROM x; DROP TABLE y; END $$ LANGUAGE plpgsql;\n/* ALTER TABLE runs DROP COLUMN held_at; */ SELECT 'a;b';`;
    expect(statements(sql)).toEqual(["CREATE FUNCTION f() RETURNS void AS $$ BEGIN DELETE FROM x; DROP TABLE y; END $$ LANGUAGE plpgsql", "SELECT 'a;b'"]);
    expect(refused(sql)).toEqual([]);
  });

  it("reads a function's signature without its argument names, so a changed argument list shows", () => {
    expect(functionSignatures(`CREATE OR REPLACE FUNCTION holdfast_slot_acquire(p_org_id text, p_cap int, p_lease_ms float8)\nRETURNS jsonb AS $$ SELECT 1 $$`)).toEqual(["holdfast_slot_acquire(text, int, double precision)"]);
    expect(functionSignatures(`CREATE FUNCTION "holdfast_x"(text, integer DEFAULT 1) RETURNS int`)).toEqual(["holdfast_x(text, int)"]);
  });
});
