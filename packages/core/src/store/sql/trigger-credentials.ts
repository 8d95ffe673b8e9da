import type { Tx } from "@holdfast/db";

/** The start trigger's credentials, and the goal URL's own (a sender of conversions cannot start runs with them). */
export type CredentialKind = "signing_secret" | "url_token" | "goal_signing_secret" | "goal_url_token";
export type TriggerAuth = "signed" | "url_token";

export interface TriggerCredentialRow {
  kind: CredentialKind;
  secret: string;
  createdAt: Date;
  /** null: the current credential; otherwise accepted until then (the overlap after a rotation). */
  expiresAt: Date | null;
}

/** The credentials a trigger accepts now (current, and rotated-away ones inside their overlap), newest first. */
export async function triggerCredentialsAccepted(tx: Tx, orgId: string, automationId: string): Promise<TriggerCredentialRow[]> {
  return tx.$queryRaw<TriggerCredentialRow[]>`
    SELECT kind, secret, created_at AS "createdAt", expires_at AS "expiresAt" FROM trigger_credentials
    WHERE org_id = ${orgId} AND automation_id = ${automationId} AND (expires_at IS NULL OR expires_at > now())
    ORDER BY created_at DESC`;
}

export async function triggerCredentialsInsert(tx: Tx, orgId: string, automationId: string, kind: CredentialKind, secret: string): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO trigger_credentials (org_id, automation_id, kind, secret) VALUES (${orgId}, ${automationId}, ${kind}, ${secret})`;
}

/**
 * Retires the current credential of a kind: accepted for `overlapSeconds` more (by the database clock). Locks the
 * automation row first so two rotations at once take turns instead of both retiring the same row.
 */
export async function triggerCredentialsRetireCurrent(tx: Tx, orgId: string, automationId: string, kind: CredentialKind, overlapSeconds: number): Promise<void> {
  await tx.$queryRaw`SELECT id FROM automations WHERE org_id = ${orgId} AND id = ${automationId} FOR UPDATE`;
  await tx.$executeRaw`
    UPDATE trigger_credentials SET expires_at = now() + make_interval(secs => ${overlapSeconds})
    WHERE org_id = ${orgId} AND automation_id = ${automationId} AND kind = ${kind} AND expires_at IS NULL`;
}

/** Ends the overlap now: every rotated-away credential of the kind stops being accepted (a leaked one, say). */
export async function triggerCredentialsExpireRetired(tx: Tx, orgId: string, automationId: string, kind: CredentialKind): Promise<number> {
  return tx.$executeRaw`
    UPDATE trigger_credentials SET expires_at = now()
    WHERE org_id = ${orgId} AND automation_id = ${automationId} AND kind = ${kind} AND expires_at > now()`;
}
