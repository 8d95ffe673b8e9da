import type { Tx } from "@holdfast/db";

/** One edit of an approval's email draft (the original and edited subject/text, who, via where, the digests). */
export interface ApprovalEditRow {
  id: string;
  orgId: string;
  approvalId: string;
  originalSubject: string;
  originalText: string | null;
  editedSubject: string;
  editedText: string;
  hadHtml: boolean;
  editedBy: string;
  editedByName: string;
  via: "inbox" | "slack";
  digestBefore: string;
  digestAfter: string;
  createdAt: Date;
}

const cols = (e: string) => `${e}id, ${e}org_id AS "orgId", ${e}approval_id AS "approvalId", ${e}original_subject AS "originalSubject",
  ${e}original_text AS "originalText", ${e}edited_subject AS "editedSubject", ${e}edited_text AS "editedText", ${e}had_html AS "hadHtml",
  ${e}edited_by AS "editedBy", ${e}edited_by_name AS "editedByName", ${e}via, ${e}digest_before AS "digestBefore",
  ${e}digest_after AS "digestAfter", ${e}created_at AS "createdAt"`;
const columns = cols("");

export type NewApprovalEdit = Omit<ApprovalEditRow, "id" | "createdAt">;

/** Records an edit (in the transaction that changes the approval under its lock). */
export async function approvalEditsInsert(tx: Tx, e: NewApprovalEdit): Promise<ApprovalEditRow> {
  const rows = await tx.$queryRawUnsafe<ApprovalEditRow[]>(
    `INSERT INTO approval_edits (org_id, approval_id, original_subject, original_text, edited_subject, edited_text, had_html,
                                 edited_by, edited_by_name, via, digest_before, digest_after)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     RETURNING ${columns}`,
    e.orgId,
    e.approvalId,
    e.originalSubject,
    e.originalText,
    e.editedSubject,
    e.editedText,
    e.hadHtml,
    e.editedBy,
    e.editedByName,
    e.via,
    e.digestBefore,
    e.digestAfter,
  );
  const row = rows[0];
  if (!row) throw new Error(`edit of approval ${e.approvalId} not inserted`);
  return row;
}

/** The edit that made the approval's current content (digest_after = its digest), if any. */
export async function approvalEditsMadeDigest(tx: Tx, orgId: string, approvalId: string, digest: string): Promise<ApprovalEditRow | undefined> {
  const rows = await tx.$queryRawUnsafe<ApprovalEditRow[]>(
    `SELECT ${columns} FROM approval_edits WHERE org_id = $1 AND approval_id = $2 AND digest_after = $3 ORDER BY created_at DESC, id DESC LIMIT 1`,
    orgId,
    approvalId,
    digest,
  );
  return rows[0];
}

/** The edits of a run's approvals, oldest first (the run page). */
export async function approvalEditsOfRun(tx: Tx, orgId: string, runId: string): Promise<ApprovalEditRow[]> {
  return tx.$queryRawUnsafe<ApprovalEditRow[]>(
    `SELECT ${cols("e.")} FROM approval_edits e
     JOIN approvals a ON a.org_id = e.org_id AND a.id = e.approval_id
     WHERE e.org_id = $1 AND a.run_id = $2 ORDER BY e.created_at, e.id`,
    orgId,
    runId,
  );
}

/** A contact's erasure: the texts of the edits of their runs' approvals (who edited, and when, stay). */
export async function approvalEditsErase(tx: Tx, orgId: string, runIds: string[]): Promise<void> {
  await tx.$executeRaw`
    UPDATE approval_edits e SET original_subject = '(erased)', original_text = CASE WHEN original_text IS NULL THEN NULL ELSE '(erased)' END,
                                edited_subject = '(erased)', edited_text = '(erased)'
    FROM approvals a
    WHERE e.org_id = ${orgId} AND a.org_id = e.org_id AND a.id = e.approval_id AND a.run_id = ANY(${runIds}::text[])`;
}

/** The latest edit of each of these approvals (the inbox says who edited a pending draft, and when). */
export async function approvalEditsLatestOf(tx: Tx, orgId: string, approvalIds: string[]): Promise<ApprovalEditRow[]> {
  if (approvalIds.length === 0) return [];
  return tx.$queryRawUnsafe<ApprovalEditRow[]>(
    `SELECT DISTINCT ON (approval_id) ${columns} FROM approval_edits
     WHERE org_id = $1 AND approval_id = ANY($2::text[]) ORDER BY approval_id, created_at DESC, id DESC`,
    orgId,
    approvalIds,
  );
}
