import { minPasswordLength, viewInvitation } from "@holdfast/core/people";
import type { Metadata } from "next";
import Link from "next/link";
import { db } from "../../../server/db";
import { invitationScope, maskedEmail, withArticle } from "../../../server/invitations";
import { currentUser } from "../../../server/session";
import { orUnavailable, unavailable } from "../../../server/unavailable";
import { viewerClock } from "../../../server/viewer-zone";
import { At } from "../../ui";
import { Unavailable } from "../../unavailable";
import { acceptAction, declineAction, signOutForInvitationAction } from "./actions";
import { NewAccountForm } from "./new-account-form";

export const dynamic = "force-dynamic";
// The page's address carries the invitation's token: no link on it may hand that address to another site.
export const metadata: Metadata = { title: "Invitation · Holdfast", referrer: "no-referrer" };

/**
 * An invitation's link. It shows the organisation and the role, then what the visitor can do: accept or decline
 * (signed in as the invited address), sign out first (signed in as someone else), sign in (the address has an
 * account) or make the account (it has none). An invitation that cannot be used says why in a sentence.
 */
export default async function InvitationPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const loaded = await orUnavailable(async () => {
    const user = await currentUser();
    return { user, view: await viewInvitation(db, token, user && { id: user.id, email: user.email }, invitationScope) };
  });
  if (loaded === unavailable) return <Unavailable />;
  const { user, view } = loaded;
  const { clock } = await viewerClock();
  const path = `/invite/${token}`;

  if (view.kind === "refused") return <RefusedInvitation message={view.message} signedIn={!!user} path={path} />;
  if (view.kind === "accepted") {
    return (
      <section className="signin invitation">
        <h1>{view.orgName}</h1>
        <p className="flash flash-ok" role="status">
          You accepted this invitation <At at={view.acceptedAt} clock={clock} />.{" "}
          {view.role ? `You are a member of ${view.orgName} as ${withArticle(view.role)}.` : `You are no longer a member of ${view.orgName}.`}
        </p>
        <Link href="/">Go to Holdfast</Link>
      </section>
    );
  }

  const { offer } = view;
  return (
    <section className="signin invitation">
      <h1>Join {offer.orgName}</h1>
      <p>
        You are invited to join <strong>{offer.orgName}</strong> on Holdfast as <strong>{withArticle(offer.role)}</strong>. This invitation is
        for {maskedEmail(offer.email)} and works until <At at={offer.expiresAt} clock={clock} />.
      </p>
      <VisitorChoices view={view} token={token} path={path} />
    </section>
  );
}

/** An invitation that cannot be used, and why. */
function RefusedInvitation({ message, signedIn, path }: { message: string; signedIn: boolean; path: string }) {
  return (
    <section className="signin invitation">
      <h1>Invitation</h1>
      <p className="flash flash-error" role="alert">
        {message}
      </p>
      {signedIn ? <Link href="/">Go to Holdfast</Link> : <Link href={`/signin?next=${encodeURIComponent(path)}`}>Sign in</Link>}
    </section>
  );
}

type Offered = Extract<Awaited<ReturnType<typeof viewInvitation>>, { kind: "open" }>;

/** What the visitor can do: accept or decline, sign out first, sign in, or make the account. */
function VisitorChoices({ view, token, path }: { view: Offered; token: string; path: string }) {
  if (view.visitor === "invited") {
    return (
      <div className="row-inline">
        <form action={acceptAction}>
          <input type="hidden" name="token" value={token} />
          <button type="submit" className="primary">
            Accept and join {view.offer.orgName}
          </button>
        </form>
        <form action={declineAction}>
          <input type="hidden" name="token" value={token} />
          <button type="submit">Decline</button>
        </form>
      </div>
    );
  }
  if (view.visitor === "other_address") {
    return (
      <>
        <p className="flash flash-error" role="alert">
          This invitation is for another email address than the one you are signed in with. Sign out, then sign in with the invited address
          (or create its account) to accept.
        </p>
        <form action={signOutForInvitationAction}>
          <input type="hidden" name="token" value={token} />
          <button type="submit">Sign out and continue</button>
        </form>
      </>
    );
  }
  if (view.accountExists) {
    return (
      <p>
        This address already has a Holdfast account: sign in with it, then accept or decline.{" "}
        <Link href={`/signin?next=${encodeURIComponent(path)}`}>Sign in to accept</Link>
      </p>
    );
  }
  return (
    <>
      <p>To accept, create your account: choose the name others will see and a password. You sign in with the invited address.</p>
      <NewAccountForm token={token} minPassword={minPasswordLength} />
    </>
  );
}
