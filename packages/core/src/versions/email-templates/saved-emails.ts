import type { Db, Tx } from "@holdfast/db";
import { HoldfastError, pgErrorCode } from "../../base/errors";
import {
  type EmailTemplateContent,
  type EmailTemplateRow,
  emailTemplatesDelete,
  emailTemplatesFindByName,
  emailTemplatesGet,
  emailTemplatesInsertIfNameFree,
  emailTemplatesList,
  emailTemplatesMaxPerOrg,
  emailTemplatesUpdateIfUnchanged,
} from "../../store/sql/email-templates";
import { checkEmailTemplate, type EmailTemplateCheck } from "./check";

/**
 * Saved emails (Automations -> Saved emails): an organisation's subjects and bodies with variables, copied into
 * send_email steps by the editor. Every call is scoped by the organisation. A save repeated with the same content
 * (a second click, a retry after a lost answer) returns the saved email as it is: no second row, no error.
 */

export type SavedEmail = EmailTemplateRow & { check: EmailTemplateCheck };

/** One error class per condition; the web maps the codes (`_not_found`, `_exists`) to its statuses. */
export class SavedEmailInvalidError extends HoldfastError {
  constructor(readonly problems: EmailTemplateCheck["errors"]) {
    super("saved_email_invalid", problems.map((p) => p.message).join(" "));
  }
}
export class SavedEmailExistsError extends HoldfastError {
  constructor(name: string) {
    super("saved_email_exists", `There is already a saved email named "${name}": pick another name, or open that one to change it.`);
  }
}
export class SavedEmailLimitError extends HoldfastError {
  constructor() {
    super("saved_email_limit", `An organisation keeps at most ${emailTemplatesMaxPerOrg} saved emails: delete one you no longer use, then save again.`);
  }
}
export class SavedEmailNotFoundError extends HoldfastError {
  constructor() {
    super("saved_email_not_found", "This saved email no longer exists (someone deleted it): reload the list.");
  }
}
export class SavedEmailChangedError extends HoldfastError {
  constructor(by: string) {
    super("saved_email_changed", `${by.replace(/^user:/, "")} changed this saved email after you opened it: reload it, then make your change again.`);
  }
}

/** The name's unique index refused the row: PostgreSQL's 23505, as pg or Prisma's driver adapter (P2010) reports it. */
function isUniqueViolation(error: unknown): boolean {
  const adapter = (error as { meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } } } | null)?.meta?.driverAdapterError?.cause;
  return pgErrorCode(error) === "23505" || adapter?.originalCode === "23505";
}

const withCheck = (row: EmailTemplateRow): SavedEmail => ({ ...row, check: checkEmailTemplate(row) });
const sameContent = (row: EmailTemplateRow, c: EmailTemplateContent) => row.name === c.name && row.subject === c.subject && row.text === c.text && row.html === c.html;

/** Trims the name and drops an empty HTML message; refuses content with errors (a malformed `{{`, an unknown root). */
function checked(c: EmailTemplateContent): EmailTemplateContent {
  const content = { ...c, name: c.name.trim(), html: c.html === null || c.html.trim() === "" ? null : c.html };
  const { errors } = checkEmailTemplate(content);
  if (errors.length > 0) throw new SavedEmailInvalidError(errors);
  return content;
}

export async function listSavedEmails(db: Db | Tx, orgId: string): Promise<SavedEmail[]> {
  return (await emailTemplatesList(db, orgId)).map(withCheck);
}

export async function getSavedEmail(db: Db | Tx, orgId: string, id: string): Promise<SavedEmail> {
  const row = await emailTemplatesGet(db, orgId, id);
  if (!row) throw new SavedEmailNotFoundError();
  return withCheck(row);
}

/** A new saved email. The same name and content again returns the first (`repeated`); another content under that name is refused. */
export async function createSavedEmail(db: Db, orgId: string, c: EmailTemplateContent, by: string): Promise<{ saved: SavedEmail; repeated: boolean }> {
  const content = checked(c);
  const row = await emailTemplatesInsertIfNameFree(db, orgId, content, by);
  if (row) return { saved: withCheck(row), repeated: false };
  const holder = await emailTemplatesFindByName(db, orgId, content.name);
  if (holder && sameContent(holder, content)) return { saved: withCheck(holder), repeated: true };
  if (!holder) throw new SavedEmailLimitError();
  throw new SavedEmailExistsError(holder.name);
}

/**
 * Changes a saved email as read at `readAt` (its updatedAt). Steps filled from it keep their copy. The same change
 * again returns the saved email as it is; a change over someone's newer one is refused in words.
 */
export async function updateSavedEmail(db: Db | Tx, orgId: string, id: string, readAt: Date, c: EmailTemplateContent, by: string): Promise<SavedEmail> {
  const content = checked(c);
  let row: EmailTemplateRow | null;
  try {
    row = await emailTemplatesUpdateIfUnchanged(db, orgId, id, readAt, content, by);
  } catch (error) {
    if (isUniqueViolation(error)) throw new SavedEmailExistsError(content.name);
    throw error;
  }
  if (row) return withCheck(row);
  const now = await emailTemplatesGet(db, orgId, id);
  if (!now) throw new SavedEmailNotFoundError();
  if (sameContent(now, content)) return withCheck(now);
  throw new SavedEmailChangedError(now.updatedBy);
}

/** Deletes a saved email; steps filled from it keep their copy. false: it was gone already (a second click). */
export async function deleteSavedEmail(db: Db | Tx, orgId: string, id: string): Promise<boolean> {
  return (await emailTemplatesDelete(db, orgId, id)) > 0;
}
