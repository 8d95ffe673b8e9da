import { organisationsEnsure } from "@holdfast/core/store";
import { upsertMember } from "@holdfast/core/people";
import { type Db, inTx } from "@holdfast/db";

/** The password e2e members sign in with. */
export const testPassword = "correct horse battery";

type Role = Parameters<typeof upsertMember>[1]["role"];

/**
 * A member of the organisation who signs in with testPassword (`password: null`: one who cannot sign in, as an
 * approver reached only in Slack). Their user id.
 */
export function addMember(db: Db, orgId: string, email: string, name: string, role: Role, o: { password?: string | null; slackUserId?: string } = {}): Promise<string> {
  return upsertMember(db, { orgId, email, name, role, password: o.password === undefined ? testPassword : o.password, ...(o.slackUserId ? { slackUserId: o.slackUserId } : {}) });
}

/**
 * The organisation (acme unless named, its name the slug capitalised; made when missing) with its owner, who signs
 * in with testPassword: its id.
 */
export async function organisationWithOwner(db: Db, owner: { email: string; name: string }, slug = "acme"): Promise<string> {
  const orgId = await inTx(db, (tx) => organisationsEnsure(tx, slug, slug.charAt(0).toUpperCase() + slug.slice(1)));
  await addMember(db, orgId, owner.email, owner.name, "owner");
  return orgId;
}
