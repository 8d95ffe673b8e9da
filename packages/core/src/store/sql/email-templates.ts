import { type Db, inTx, type Tx } from "@holdfast/db";

/** One saved email of an organisation (`email_templates`). */
export interface EmailTemplateRow {
  id: string;
  name: string;
  subject: string;
  text: string;
  html: string | null;
  createdAt: Date;
  createdBy: string;
  updatedAt: Date;
  updatedBy: string;
}

export interface EmailTemplateContent {
  name: string;
  subject: string;
  text: string;
  html: string | null;
}

const columns = `id, name, subject, text, html, created_at AS "createdAt", created_by AS "createdBy", updated_at AS "updatedAt",
  updated_by AS "updatedBy"`;

/** The organisation's saved emails by name (at most 500). */
export function emailTemplatesList(db: Db | Tx, orgId: string): Promise<EmailTemplateRow[]> {
  return db.$queryRawUnsafe<EmailTemplateRow[]>(`SELECT ${columns} FROM email_templates WHERE org_id = $1 ORDER BY lower(name), id LIMIT 500`, orgId);
}

export async function emailTemplatesGet(db: Db | Tx, orgId: string, id: string): Promise<EmailTemplateRow | null> {
  const rows = await db.$queryRawUnsafe<EmailTemplateRow[]>(`SELECT ${columns} FROM email_templates WHERE org_id = $1 AND id = $2`, orgId, id);
  return rows[0] ?? null;
}

/** The saved email of this name, whatever its case; null when there is none. */
export async function emailTemplatesFindByName(db: Db | Tx, orgId: string, name: string): Promise<EmailTemplateRow | null> {
  const rows = await db.$queryRawUnsafe<EmailTemplateRow[]>(`SELECT ${columns} FROM email_templates WHERE org_id = $1 AND lower(name) = lower($2)`, orgId, name);
  return rows[0] ?? null;
}

/** The most saved emails an organisation keeps (the list shows them all). */
export const emailTemplatesMaxPerOrg = 500;

/**
 * A new saved email; null when the organisation already has one of this name (whatever its case: the unique index
 * decides, so two saves at one instant make one row) or already keeps `emailTemplatesMaxPerOrg`.
 */
export async function emailTemplatesInsertIfNameFree(db: Db, orgId: string, c: EmailTemplateContent, by: string): Promise<EmailTemplateRow | null> {
  // The organisation's lock first, then the count in a statement of its own (a snapshot taken after the wait), so two
  // saves at the limit cannot both see room for one more.
  return inTx(db, async (tx) => {
    await tx.$queryRaw`SELECT pg_advisory_xact_lock(45, hashtext(${orgId}))::text`;
    return emailTemplatesInsertCounted(tx, orgId, c, by);
  });
}

async function emailTemplatesInsertCounted(db: Tx, orgId: string, c: EmailTemplateContent, by: string): Promise<EmailTemplateRow | null> {
  const rows = await db.$queryRawUnsafe<EmailTemplateRow[]>(
    `INSERT INTO email_templates (org_id, name, subject, text, html, created_by, updated_by, created_at, updated_at)
     SELECT $1, $2, $3, $4, $5, $6, $6, date_trunc('milliseconds', now()), date_trunc('milliseconds', now())
     WHERE (SELECT count(*) FROM email_templates WHERE org_id = $1) < $7
     ON CONFLICT (org_id, lower(name)) DO NOTHING RETURNING ${columns}`,
    orgId,
    c.name,
    c.subject,
    c.text,
    c.html,
    by,
    emailTemplatesMaxPerOrg,
  );
  return rows[0] ?? null;
}

/**
 * Replaces a saved email's name and content, only while it is as the editor last read it (`updatedAt`, kept to the
 * millisecond, as a JavaScript Date carries it, and moved on by every update): a save over
 * someone else's newer change updates nothing. Returns the row as saved, or null (gone, or changed meanwhile).
 * A name another saved email holds raises the unique violation (23505) for the caller to word.
 */
export async function emailTemplatesUpdateIfUnchanged(
  db: Db | Tx,
  orgId: string,
  id: string,
  readAt: Date,
  c: EmailTemplateContent,
  by: string,
): Promise<EmailTemplateRow | null> {
  const rows = await db.$queryRawUnsafe<EmailTemplateRow[]>(
    `UPDATE email_templates SET name = $3, subject = $4, text = $5, html = $6, updated_by = $7,
       updated_at = greatest(date_trunc('milliseconds', now()), updated_at + interval '1 millisecond')
     WHERE org_id = $1 AND id = $2 AND updated_at = $8::timestamptz
     RETURNING ${columns}`,
    orgId,
    id,
    c.name,
    c.subject,
    c.text,
    c.html,
    by,
    readAt,
  );
  return rows[0] ?? null;
}

export function emailTemplatesDelete(db: Db | Tx, orgId: string, id: string): Promise<number> {
  return db.$executeRawUnsafe(`DELETE FROM email_templates WHERE org_id = $1 AND id = $2`, orgId, id);
}
