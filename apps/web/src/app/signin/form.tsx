"use client";

import { type FormEvent, useState } from "react";

/**
 * The sign-in form: posts to /api/auth/sign-in and says in plain words why an attempt was refused (wrong password,
 * too many attempts and for how long); on success it goes to the path the server returned (already made safe).
 */
export function SignInForm({ next }: { next: string }) {
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      const res = await fetch("/api/auth/sign-in", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: data.get("email"), password: data.get("password"), next }),
      });
      const body = (await res.json().catch(() => null)) as { next?: string; error?: { message?: string } } | null;
      if (res.ok && typeof body?.next === "string") {
        window.location.assign(body.next);
        return;
      }
      setError(body?.error?.message ?? `Signing in failed (HTTP ${res.status}). Try again.`);
    } catch {
      setError("The server could not be reached. Try again.");
    }
    setBusy(false);
  }

  return (
    <>
      {error ? (
        <p className="flash flash-error" role="alert">
          {error}
        </p>
      ) : null}
      <form action="/api/auth/sign-in" method="post" onSubmit={submit} className="stack">
        <input type="hidden" name="next" value={next} />
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </>
  );
}
