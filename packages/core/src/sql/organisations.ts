import type { Db, Tx } from "@holdfast/db";

/** An organisation's id from its slug (organisations carry no tenant data; every role may read them). */
export async function organisationsIdBySlug(db: Db | Tx, slug: string): Promise<string | null> {
  const rows = await (db as Tx).$queryRaw<{ id: string }[]>`SELECT id FROM organisations WHERE slug = ${slug}`;
  return rows[0]?.id ?? null;
}

export async function organisationsSlugById(db: Db | Tx, orgId: string): Promise<string | null> {
  const rows = await (db as Tx).$queryRaw<{ slug: string }[]>`SELECT slug FROM organisations WHERE id = ${orgId}`;
  return rows[0]?.slug ?? null;
}
