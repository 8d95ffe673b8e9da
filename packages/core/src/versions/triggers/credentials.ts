import { randomBytes } from "node:crypto";
import { type Db, inTx, type Tx } from "@holdfast/db";
import { HoldfastError } from "../../base/errors";
import { automationsFindBySlug, automationsInsert, automationsSetTriggerAuth } from "../../store/sql/automations";
import {
  type CredentialKind,
  type TriggerAuth,
  type TriggerCredentialRow,
  triggerCredentialsAccepted,
  triggerCredentialsExpireRetired,
  triggerCredentialsInsert,
  triggerCredentialsRetireCurrent,
} from "../../store/sql/trigger-credentials";

/**
 * Trigger credentials: every automation has a Standard Webhooks signing secret and a URL token from the moment it is
 * created (there is no unauthenticated trigger). Which one a request must present is the automation's trigger_auth.
 * Rotating keeps the previous credential accepted for a day, so senders can be updated without dropping deliveries.
 */
export const rotationOverlapSeconds = 24 * 60 * 60;

export type { CredentialKind, TriggerAuth, TriggerCredentialRow };

/** The start trigger's credentials (the goal URL has its own kinds). */
export type StartCredentialKind = "signing_secret" | "url_token";

/** A Standard Webhooks secret: `whsec_` and base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** A URL token: 32 random bytes, base64url (43 characters, safe in a path segment). */
export function newUrlToken(): string {
  return randomBytes(32).toString("base64url");
}

export class AutomationExistsError extends HoldfastError {
  constructor(slug: string) {
    super("automation_exists", `an automation "${slug}" already exists in this organisation`);
  }
}

/** Creates an automation with both trigger credentials, in the caller's transaction. */
export async function createAutomation(
  tx: Tx,
  a: { orgId: string; slug: string; name: string; triggerAuth?: TriggerAuth },
): Promise<{ id: string }> {
  const id = await automationsInsert(tx, { ...a, triggerAuth: a.triggerAuth ?? "signed" });
  if (!id) throw new AutomationExistsError(a.slug);
  await triggerCredentialsInsert(tx, a.orgId, id, "signing_secret", newSigningSecret());
  await triggerCredentialsInsert(tx, a.orgId, id, "url_token", newUrlToken());
  return { id };
}

/**
 * The automation with this slug, created (with its trigger credentials) when there is none, in the caller's
 * transaction. Two callers creating the same slug at once both get it: the second one's insert waits for the first
 * and finds nothing to insert, and its next statement sees the first one's row. What an existing automation has
 * (name, trigger mode, credentials) is left as it is.
 */
export async function findOrCreateAutomation(
  tx: Tx,
  a: { orgId: string; slug: string; name: string; triggerAuth?: TriggerAuth },
): Promise<{ id: string }> {
  const found = await automationsFindBySlug(tx, a.orgId, a.slug);
  if (found) return found;
  try {
    return await createAutomation(tx, a);
  } catch (error) {
    if (!(error instanceof AutomationExistsError)) throw error;
    const raced = await automationsFindBySlug(tx, a.orgId, a.slug);
    if (!raced) throw error;
    return raced;
  }
}

export interface TriggerSettings {
  mode: TriggerAuth;
  /** The current signing secret and URL token. */
  signingSecret: string;
  urlToken: string;
  /** Rotated-away credentials still accepted, with when they stop being accepted. */
  previous: { kind: StartCredentialKind; expiresAt: Date }[];
}

/** What the trigger accepts now; the secrets are for owners and editors only (the callers check the role). */
export async function triggerSettings(db: Db | Tx, orgId: string, automationId: string, mode: TriggerAuth): Promise<TriggerSettings> {
  // The start trigger's own: the goal URL's credentials (goal_*) are shown with the goal (run/goals/settings.ts).
  const rows = (await triggerCredentialsAccepted(db as Tx, orgId, automationId)).filter(
    (r): r is TriggerCredentialRow & { kind: StartCredentialKind } => r.kind === "signing_secret" || r.kind === "url_token",
  );
  const current = (kind: CredentialKind) => rows.find((r) => r.kind === kind && r.expiresAt === null)?.secret;
  const signingSecret = current("signing_secret");
  const urlToken = current("url_token");
  if (!signingSecret || !urlToken) throw new HoldfastError("trigger_credentials_missing", "this automation's trigger has no credential; rotate it to create one");
  return {
    mode,
    signingSecret,
    urlToken,
    previous: rows.flatMap((r) => (r.expiresAt ? [{ kind: r.kind, expiresAt: r.expiresAt }] : [])),
  };
}

/** A new credential of this kind; the previous one stays accepted for `rotationOverlapSeconds`. Returns the new value. */
export async function rotateTriggerCredential(db: Db, orgId: string, automationId: string, kind: CredentialKind): Promise<string> {
  const secret = kind === "signing_secret" || kind === "goal_signing_secret" ? newSigningSecret() : newUrlToken();
  await inTx(db, async (tx) => {
    await triggerCredentialsRetireCurrent(tx, orgId, automationId, kind, rotationOverlapSeconds);
    await triggerCredentialsInsert(tx, orgId, automationId, kind, secret);
  });
  return secret;
}

/** Stops accepting the previous credentials of a kind at once (after a leak), rather than at the overlap's end. */
export async function revokePreviousTriggerCredentials(db: Db | Tx, orgId: string, automationId: string, kind: CredentialKind): Promise<number> {
  return triggerCredentialsExpireRetired(db as Tx, orgId, automationId, kind);
}

export async function setTriggerAuth(db: Db | Tx, orgId: string, automationId: string, mode: TriggerAuth): Promise<void> {
  if (!(await automationsSetTriggerAuth(db as Tx, orgId, automationId, mode))) {
    throw new HoldfastError("automation_not_found", "automation not found");
  }
}

/** The path a trigger is called at: the URL token is part of it in url_token mode. */
export function triggerPath(orgSlug: string, automationSlug: string, mode: TriggerAuth, urlToken: string): string {
  const base = `/api/hooks/${orgSlug}/${automationSlug}`;
  return mode === "url_token" ? `${base}/${urlToken}` : base;
}
