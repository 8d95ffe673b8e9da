"use server";

import { HoldfastError } from "@holdfast/core/base";
import { acceptInvitationAsNewUser, acceptInvitation, declineInvitation, sessionCookie, signOut } from "@holdfast/core/people";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { env } from "../../../env";
import { db } from "../../../server/db";
import { formFailureSentence } from "../../../server/failure";
import { invitationScope, invitationTokenShape } from "../../../server/invitations";
import { isHttpsRequest } from "../../../server/request-info";
import { currentUser } from "../../../server/session";

/**
 * The invitation page's buttons. Each one acts and comes back to the page, which reads what the invitation is now
 * (accepted by you, declined, expired ...): a second click reads back the first instead of doing anything twice.
 */

function pathOf(data: FormData): string {
  const token = String(data.get("token") ?? "");
  if (!invitationTokenShape.test(token)) redirect("/");
  return `/invite/${token}`;
}

const tokenOf = (path: string) => path.slice("/invite/".length);

export async function acceptAction(data: FormData): Promise<void> {
  const path = pathOf(data);
  const user = await currentUser();
  if (!user) redirect(`/signin?next=${encodeURIComponent(path)}`);
  await acceptInvitation(db, tokenOf(path), user, invitationScope);
  redirect(path);
}

export async function declineAction(data: FormData): Promise<void> {
  const path = pathOf(data);
  const user = await currentUser();
  if (!user) redirect(`/signin?next=${encodeURIComponent(path)}`);
  await declineInvitation(db, tokenOf(path), user, invitationScope);
  redirect(path);
}

/** Signed in as someone else: sign out and come back to the invitation, to sign in (or sign up) as its address. */
export async function signOutForInvitationAction(data: FormData): Promise<void> {
  const path = pathOf(data);
  const jar = await cookies();
  const token = jar.get(sessionCookie)?.value;
  if (token) await signOut(db, token);
  jar.delete(sessionCookie);
  redirect(path);
}

export interface NewAccountState {
  error: string | null;
  name: string;
}

/** Makes the invited address's account (name and password chosen here), accepts, and signs in: one transaction. */
export async function createAccountAction(_previous: NewAccountState, data: FormData): Promise<NewAccountState> {
  const path = pathOf(data);
  const name = String(data.get("name") ?? "");
  const password = String(data.get("password") ?? "");
  const jar = await cookies();
  let made: Awaited<ReturnType<typeof acceptInvitationAsNewUser>>;
  try {
    made = await acceptInvitationAsNewUser(
      db,
      tokenOf(path),
      { name, password },
      { days: env.SESSION_DAYS, idleMinutes: env.SESSION_IDLE_MINUTES, previousToken: jar.get(sessionCookie)?.value },
      invitationScope,
    );
  } catch (error) {
    if (error instanceof HoldfastError) return { error: error.message, name };
    return { error: formFailureSentence(error, "accepting an invitation"), name };
  }
  if (!made.session) return { error: made.outcome.kind === "refused" ? made.outcome.message : "The invitation could not be accepted.", name };
  jar.set(sessionCookie, made.session.token, {
    httpOnly: true,
    secure: isHttpsRequest({ url: env.HOLDFAST_PUBLIC_URL, headers: await headers() }, env.HOLDFAST_PUBLIC_URL),
    sameSite: "lax",
    path: "/",
    expires: made.session.expiresAt,
  });
  redirect(path);
}
