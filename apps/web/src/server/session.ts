import { type SessionUser, sessionCookie, sessionUser } from "@holdfast/core/people";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { env } from "../env";
import { db } from "./db";

/** The signed-in user of this request (from the httpOnly session cookie), or null. */
export async function currentUser(): Promise<SessionUser | null> {
  const jar = await cookies();
  return sessionUser(db, jar.get(sessionCookie)?.value, { idleMinutes: env.SESSION_IDLE_MINUTES });
}

/** The signed-in user, or a redirect to the sign-in page that comes back to `next`. */
export async function requireUser(next: string): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) redirect(`/signin?next=${encodeURIComponent(next)}`);
  return user;
}

export { safeNext } from "./next-path";
