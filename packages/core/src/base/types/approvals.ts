/**
 * The shapes of an approval's stored settings (approvals.approvers, on_deadline, email_digest), as the table
 * modules read and write them. Pure types: versions/kinds/approval.ts checks its zod schemas produce exactly these.
 */

/** Who may decide: named users (lowercased emails) and/or everyone holding a role (an owner may always decide). */
export interface Approvers {
  users: string[];
  role?: "owner" | "editor" | "approver" | undefined;
}

export type Decision = "approved" | "rejected";

/** What happens when an approval's deadline passes with no decision. */
export type OnDeadline =
  | { action: "escalate"; to: Approvers; deadlineSeconds: number; afterwards: Decision | "stop" }
  | { action: "default"; decision: Decision }
  | { action: "stop" };

/** The digests of the email an approval shows (people/approvals/email.ts computes them). */
export interface EmailDigest {
  /** The send_email step whose email this is. */
  node: string;
  /** sha256 of the whole email (every part, absent ones as null). */
  all: string;
  to: string;
  subject: string;
  text: string | null;
  html: string | null;
  /** The approval's content was changed (an operator's correction) after it showed this email. */
  revised?: boolean;
}

/** The email an approval shows now, as rendered parts (approvals.email_draft); after an edit, the edited email. */
export interface EmailDraft {
  to: string;
  subject: string;
  text: string | null;
  /** Null after an edit: an edit is plain text, and the HTML version is not sent. */
  html: string | null;
}
