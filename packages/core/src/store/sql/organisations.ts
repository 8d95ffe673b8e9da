import type { Db, Tx } from "@holdfast/db";

/** An organisation's id from its slug (organisations carry no tenant data; every role may read them). */
export async function organisationsIdBySlug(db: Db | Tx, slug: string): Promise<string | null> {
  const rows = await (db as Tx).$queryRaw<{ id: string }[]>`SELECT id FROM organisations WHERE slug = ${slug}`;
  return rows[0]?.id ?? null;
}

/** The organisation with this slug, made with `name` when there is none; its id. */
export async function organisationsEnsure(tx: Tx, slug: string, name: string): Promise<string> {
  await tx.$executeRaw`INSERT INTO organisations (slug, name) VALUES (${slug}, ${name}) ON CONFLICT (slug) DO NOTHING`;
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM organisations WHERE slug = ${slug}`;
  if (!rows[0]) throw new Error(`organisation ${slug} vanished while it was made`);
  return rows[0].id;
}

export async function organisationsSlugById(db: Db | Tx, orgId: string): Promise<string | null> {
  const rows = await (db as Tx).$queryRaw<{ slug: string }[]>`SELECT slug FROM organisations WHERE id = ${orgId}`;
  return rows[0]?.slug ?? null;
}

export async function organisationsNameById(db: Db | Tx, orgId: string): Promise<string | null> {
  const rows = await (db as Tx).$queryRaw<{ name: string }[]>`SELECT name FROM organisations WHERE id = ${orgId}`;
  return rows[0]?.name ?? null;
}

/** Run budgets for new runs (null: none set). */
export interface RunBudgets {
  maxSteps: number | null;
  maxAgeSeconds: number | null;
}

/** Sets the organisation's run budget defaults (an undefined one is kept); the budgets after, or undefined if no such organisation. */
export async function organisationsSetRunBudgets(db: Db | Tx, orgId: string, b: Partial<RunBudgets>): Promise<RunBudgets | undefined> {
  const rows = await (db as Tx).$queryRaw<RunBudgets[]>`
    UPDATE organisations SET run_max_steps = COALESCE(${b.maxSteps ?? null}::int, run_max_steps),
                             run_max_age_seconds = COALESCE(${b.maxAgeSeconds ?? null}::int, run_max_age_seconds)
    WHERE id = ${orgId} RETURNING run_max_steps AS "maxSteps", run_max_age_seconds AS "maxAgeSeconds"`;
  return rows[0];
}

export async function organisationsRunBudgets(db: Db | Tx, orgId: string): Promise<RunBudgets | undefined> {
  const rows = await (db as Tx).$queryRaw<RunBudgets[]>`
    SELECT run_max_steps AS "maxSteps", run_max_age_seconds AS "maxAgeSeconds" FROM organisations WHERE id = ${orgId}`;
  return rows[0];
}

export async function organisationsCount(db: Db | Tx): Promise<number> {
  const rows = await (db as Tx).$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM organisations`;
  return rows[0]?.n ?? 0;
}
