import { signInAction } from "./actions";

export const dynamic = "force-dynamic";

const errors: Record<string, string> = {
  wrong: "That email and password do not match an account.",
  invalid: "Enter an email address and a password.",
};

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string; error?: string }> }) {
  const { next, error } = await searchParams;
  return (
    <section className="signin">
      <h1>Sign in</h1>
      {error && errors[error] ? (
        <p className="flash flash-error" role="alert">
          {errors[error]}
        </p>
      ) : null}
      <form action={signInAction} className="stack">
        <input type="hidden" name="next" value={next ?? "/approvals"} />
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <button type="submit" className="primary">
          Sign in
        </button>
      </form>
    </section>
  );
}
