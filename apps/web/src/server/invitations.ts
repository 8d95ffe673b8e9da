import type { OrgScope } from "@holdfast/core/people";
import { withScope } from "./scope";

/**
 * An invitation's work runs in the scope of its own organisation: the visitor is not a member yet, so their session's
 * scope cannot see it. The link's token names the organisation (core people/auth/invitations.ts), as a trigger URL does.
 */
export const invitationScope: OrgScope = (orgId, work) => withScope({ orgIds: [orgId] }, work);

/**
 * The invited address as an invitation's page shows it: the first character and the domain ("a•••@acme.test").
 * Enough for the right person to see which of their addresses to use; not the whole address, because a link travels
 * (forwarded, pasted in a chat) and whoever holds it has no need to read who it was for. Nothing here depends on
 * whether the address has an account.
 */
export function maskedEmail(email: string): string {
  const at = email.lastIndexOf("@");
  if (at <= 0) return "•••";
  return `${email.slice(0, 1)}•••${email.slice(at)}`;
}

/** "an editor", "a viewer". */
export const withArticle = (role: string) => `${/^[aeiou]/.test(role) ? "an" : "a"} ${role}`;

export const invitationTokenShape = /^[A-Za-z0-9_-]{43}$/;
