import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { functionsDir, migrationsDir } from "../src/migrate";
import { checkMigration, functionSignatures, plainIndexes, statements } from "../src/migration-rules";

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

/** The previous release's plain (non-unique) indexes, from its schema dump: the ones a `-- speed only:` line may drop. */
const previousPlain = () => plainIndexes(git("show", `${previous}:prisma/schema.sql`).out);

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
    const broken = newer.flatMap((m) => checkMigration(readFileSync(join(migrationsDir, m, "migration.sql"), "utf8"), usesOf, previousPlain()).map((v) => ({ migration: m, ...v })));
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
  const refused = (sql: string) => checkMigration(sql, usesOf).map((v) => v.rule);

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
    const plain = previousPlain();
    expect(plain.has("count_changes_version_idx")).toBe(true);
    const drop = (name: string, note = true) => checkMigration(`${note ? `-- speed only: ${name}\n` : ""}DROP INDEX IF EXISTS "${name}";`, usesOf, plain).map((v) => v.rule);
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
