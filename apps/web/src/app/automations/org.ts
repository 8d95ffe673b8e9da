import type { SessionUser } from "@holdfast/core/people";

/** The organisation a builder page works in: `?org=<slug>` if the user belongs to it, else their first. */
export function pickOrg(user: SessionUser, slug: string | undefined) {
  return user.memberships.find((m) => m.orgSlug === slug) ?? user.memberships[0] ?? null;
}
export const canEditRole = (role: string) => role === "owner" || role === "editor";
