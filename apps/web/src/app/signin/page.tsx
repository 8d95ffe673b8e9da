import { safeNext } from "../../server/session";
import { SignInForm } from "./form";

export const dynamic = "force-dynamic";

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string }> }) {
  const { next } = await searchParams;
  return (
    <section className="signin">
      <h1>Sign in</h1>
      <SignInForm next={safeNext(next)} />
    </section>
  );
}
