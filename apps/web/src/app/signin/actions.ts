"use server";

import { sessionCookie, signOut } from "@holdfast/core/people";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { db } from "../../server/db";

// Signing in is POST /api/auth/sign-in (throttled, answers 429 with Retry-After); see server/sign-in.ts.

export async function signOutAction(): Promise<void> {
  const jar = await cookies();
  const token = jar.get(sessionCookie)?.value;
  if (token) await signOut(db, token);
  jar.delete(sessionCookie);
  redirect("/signin");
}
