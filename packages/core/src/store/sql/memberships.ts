import type { Db, Tx } from "@holdfast/db";

/** A member's role in one organisation (memberships.role). */
export type Role = "owner" | "editor" | "approver" | "viewer";

/** The (lowercased) emails of the organisation's members, with their roles. */
export function membershipsListEmails(tx: Tx, orgId: string): Promise<{ email: string; role: string }[]> {
  return tx.$queryRaw<{ email: string; role: string }[]>`
    SELECT lower(u.email) AS email, m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = ${orgId}`;
}

/** Members with their emails and Slack links, for linking them to a workspace's users. */
export function membershipsSlackLinks(tx: Tx, orgId: string): Promise<{ userId: string; email: string; slackUserId: string | null }[]> {
  return tx.$queryRaw<{ userId: string; email: string; slackUserId: string | null }[]>`
    SELECT m.user_id AS "userId", lower(u.email) AS email, m.slack_user_id AS "slackUserId"
    FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = ${orgId} ORDER BY u.email`;
}

/**
 * The linked Slack users of the members who may decide an approval: those named by email, and those holding the role
 * or a higher one (approver < editor < owner). Members without a link are left out.
 */
export async function membershipsSlackUsersOf(tx: Db | Tx, orgId: string, emails: string[], role: string | null): Promise<string[]> {
  const rows = await tx.$queryRaw<{ slackUserId: string }[]>`
    SELECT DISTINCT m.slack_user_id AS "slackUserId"
    FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE m.org_id = ${orgId} AND m.slack_user_id IS NOT NULL
      AND (lower(u.email) = ANY(${emails.map((e) => e.toLowerCase())}::text[])
           OR (${role}::text IS NOT NULL AND array_position(ARRAY['approver', 'editor', 'owner'], m.role::text) >= array_position(ARRAY['approver', 'editor', 'owner'], ${role}::text)))
    ORDER BY 1`;
  return rows.map((r) => r.slackUserId);
}

/**
 * Links a member to a Slack user found by their email, only while they have no link (a link set by hand stays) and
 * no other member of the organisation has that Slack user. False when either holds.
 */
export async function membershipsLinkSlackIfUnset(tx: Tx, orgId: string, userId: string, slackUserId: string): Promise<boolean> {
  const n = await tx.$executeRaw`
    UPDATE memberships SET slack_user_id = ${slackUserId}
    WHERE org_id = ${orgId} AND user_id = ${userId} AND slack_user_id IS NULL
      AND NOT EXISTS (SELECT 1 FROM memberships o WHERE o.org_id = ${orgId} AND o.slack_user_id = ${slackUserId})`;
  return n > 0;
}

/** Makes the user a member with `role`; an existing membership takes the role (and a Slack user id when given). */
export function membershipsUpsert(tx: Tx, m: { orgId: string; userId: string; role: Role; slackUserId?: string | null }): Promise<number> {
  return tx.$executeRaw`
    INSERT INTO memberships (org_id, user_id, role, slack_user_id) VALUES (${m.orgId}, ${m.userId}, ${m.role}, ${m.slackUserId ?? null})
    ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role, slack_user_id = COALESCE(EXCLUDED.slack_user_id, memberships.slack_user_id)`;
}

/**
 * Makes the user a member with `role` unless they already are one (an existing member keeps the role they have: an
 * accepted invitation never demotes an owner). True when the membership is new.
 */
export async function membershipsInsertIfNew(tx: Tx, orgId: string, userId: string, role: Role): Promise<boolean> {
  const n = await tx.$executeRaw`
    INSERT INTO memberships (org_id, user_id, role) VALUES (${orgId}, ${userId}, ${role}) ON CONFLICT (org_id, user_id) DO NOTHING`;
  return n > 0;
}

/** The user's role in the organisation now (undefined: not a member). */
export async function membershipsRoleOf(db: Db | Tx, orgId: string, userId: string): Promise<Role | undefined> {
  const rows = await db.$queryRaw<{ role: Role }[]>`SELECT role FROM memberships WHERE org_id = ${orgId} AND user_id = ${userId}`;
  return rows[0]?.role;
}

/** Whether the organisation has a member with this (lowercased) email. */
export async function membershipsHasEmail(db: Db | Tx, orgId: string, email: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ found: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = ${orgId} AND u.email = ${email}) AS found`;
  return rows[0]?.found ?? false;
}

/** Ends the membership of the user with this (lowercased) email. */
export function membershipsDeleteByEmail(db: Db | Tx, orgId: string, email: string): Promise<number> {
  return db.$executeRaw`
    DELETE FROM memberships WHERE org_id = ${orgId} AND user_id = (SELECT id FROM users WHERE email = ${email})`;
}

/** The user's organisations with their role, by name. */
export function membershipsOfUser(db: Db | Tx, userId: string): Promise<{ orgId: string; orgSlug: string; orgName: string; role: Role }[]> {
  return db.$queryRaw<{ orgId: string; orgSlug: string; orgName: string; role: Role }[]>`
    SELECT m.org_id AS "orgId", o.slug AS "orgSlug", o.name AS "orgName", m.role
    FROM memberships m JOIN organisations o ON o.id = m.org_id
    WHERE m.user_id = ${userId} ORDER BY o.name`;
}

/** A person as a decider sees them: their role in the organisation now (null: not a member). */
export interface MemberIdentity {
  userId: string;
  email: string;
  name: string;
  role: Role | null;
}

/** The user (signed in on the web) with their role in the organisation, if any. */
export async function membershipsIdentityOfUser(tx: Tx, orgId: string, userId: string): Promise<MemberIdentity | undefined> {
  const rows = await tx.$queryRaw<MemberIdentity[]>`
    SELECT u.id AS "userId", u.email, u.name, m.role FROM users u
    LEFT JOIN memberships m ON m.user_id = u.id AND m.org_id = ${orgId}
    WHERE u.id = ${userId}`;
  return rows[0];
}

/** The member linked to a Slack user in the organisation, if any. */
export async function membershipsIdentityOfSlackUser(tx: Tx, orgId: string, slackUserId: string): Promise<MemberIdentity | undefined> {
  const rows = await tx.$queryRaw<MemberIdentity[]>`
    SELECT u.id AS "userId", u.email, u.name, m.role FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE m.org_id = ${orgId} AND m.slack_user_id = ${slackUserId}`;
  return rows[0];
}

/** The organisation's members by name. */
export function membershipsList(db: Db | Tx, orgId: string): Promise<{ userId: string; email: string; name: string; role: string; slackUserId: string | null }[]> {
  return db.$queryRaw<{ userId: string; email: string; name: string; role: string; slackUserId: string | null }[]>`
    SELECT u.id AS "userId", u.email, u.name, m.role, m.slack_user_id AS "slackUserId"
    FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = ${orgId} ORDER BY u.name`;
}

/**
 * Locks the organisation's owner rows, in one order (two role changes take turns without a deadlock): a change that
 * waited here sees the other's demotion when it goes on.
 */
export function membershipsLockOwners(tx: Tx, orgId: string): Promise<unknown> {
  return tx.$queryRaw`SELECT user_id FROM memberships WHERE org_id = ${orgId} AND role = 'owner' ORDER BY user_id FOR UPDATE`;
}

/**
 * Gives the member `role` unless that would leave the organisation without an owner (another owner must remain when
 * an owner is given another role). Run after membershipsLockOwners in the same transaction. The number of rows
 * changed: 0 when the user is not a member or is the last owner.
 */
export function membershipsSetRoleKeepingAnOwner(tx: Tx, orgId: string, userId: string, role: Role): Promise<number> {
  return tx.$executeRaw`
    UPDATE memberships SET role = ${role}
    WHERE org_id = ${orgId} AND user_id = ${userId}
      AND (${role}::text = 'owner' OR role <> 'owner'
           OR EXISTS (SELECT 1 FROM memberships o WHERE o.org_id = ${orgId} AND o.role = 'owner' AND o.user_id <> ${userId}))`;
}

/** Sets (or clears) the member's Slack user by hand. */
export function membershipsSetSlackUser(db: Db | Tx, orgId: string, userId: string, slackUserId: string | null): Promise<number> {
  return db.$executeRaw`
    UPDATE memberships SET slack_user_id = ${slackUserId} WHERE org_id = ${orgId} AND user_id = ${userId}`;
}

/** The email of a member of the organisation, if the user is one. */
export async function membershipsEmailOf(db: Db | Tx, orgId: string, userId: string): Promise<string | undefined> {
  const rows = await db.$queryRaw<{ email: string }[]>`
    SELECT u.email FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.org_id = ${orgId} AND u.id = ${userId}`;
  return rows[0]?.email;
}
