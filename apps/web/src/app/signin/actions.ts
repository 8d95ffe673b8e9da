"use server";

import { sessionCookie, signIn, signOut } from "@holdfast/core";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { z } from "zod";
import { db } from "../../server/db";
import { safeNext, secureCookies } from "../../server/session";

const form = z.object({ email: z.string().trim().email().max(320), password: z.string().min(1).max(1_000), next: z.string().max(2_000).optional() });

export async function signInAction(data: FormData): Promise<void> {
  const parsed = form.safeParse({ email: data.get("email"), password: data.get("password"), next: data.get("next") ?? undefined });
  const next = safeNext(parsed.success ? parsed.data.next : undefined);
  if (!parsed.success) redirect(`/signin?error=invalid&next=${encodeURIComponent(next)}`);
  const session = await signIn(db, parsed.data.email, parsed.data.password);
  if (!session) redirect(`/signin?error=wrong&next=${encodeURIComponent(next)}`);
  const jar = await cookies();
  jar.set(sessionCookie, session.token, { httpOnly: true, secure: secureCookies, sameSite: "lax", path: "/", expires: session.expiresAt });
  redirect(next);
}

export async function signOutAction(): Promise<void> {
  const jar = await cookies();
  const token = jar.get(sessionCookie)?.value;
  if (token) await signOut(db, token);
  jar.delete(sessionCookie);
  redirect("/signin");
}
