"use client";

import { useActionState } from "react";
import { SubmitButton } from "../../submit-button";
import { createAccountAction, type NewAccountState } from "./actions";

/** The account an invitation makes for an address that has none: the person chooses their name and password. */
export function NewAccountForm({ token, minPassword }: { token: string; minPassword: number }) {
  const [state, action, pending] = useActionState<NewAccountState, FormData>(createAccountAction, { error: null, name: "" });
  return (
    <>
      {state.error ? (
        <p className="flash flash-error" role="alert">
          {state.error}
        </p>
      ) : null}
      <form action={action} className="stack">
        <input type="hidden" name="token" value={token} />
        <label>
          Your name
          <input name="name" autoComplete="name" required maxLength={200} defaultValue={state.name} />
        </label>
        <label>
          Choose a password (at least {minPassword} characters)
          <input name="password" type="password" autoComplete="new-password" required minLength={minPassword} maxLength={1000} />
        </label>
        <SubmitButton className="primary" pending={pending}>
          {pending ? "Creating your account…" : "Create account and join"}
        </SubmitButton>
      </form>
    </>
  );
}
