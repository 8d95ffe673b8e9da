import Link from "next/link";
import { requireUser } from "../../../server/session";
import { orUnavailable, unavailable } from "../../../server/unavailable";
import { Unavailable } from "../../unavailable";
import { canEditRole, pickOrg } from "../org";
import { SavedEmails } from "./saved-emails";

export const dynamic = "force-dynamic";

/** Automations -> Saved emails: the organisation's subjects and messages that send steps copy. */
export default async function SavedEmailsPage({ searchParams }: { searchParams: Promise<{ org?: string; edit?: string }> }) {
  const params = await searchParams;
  const user = await orUnavailable(() => requireUser("/automations/saved-emails"));
  if (user === unavailable) return <Unavailable />;
  const org = pickOrg(user, params.org);
  if (!org) return <p className="empty muted">You are not a member of any organisation yet. Ask an owner to add you.</p>;
  return (
    <>
      <p className="small">
        <Link href={`/automations?org=${org.orgSlug}`}>← Automations</Link>
      </p>
      <h1>Saved emails</h1>
      <p className="muted saved-emails-intro">
        Write a subject and message once, then use it in any automation: in a Send email step, choose <strong>Use a saved email</strong>. The step gets its own
        copy, so changing or deleting a saved email here never changes an automation that already uses it; the step says when its saved email changed since.
      </p>
      <SavedEmails orgSlug={org.orgSlug} canEdit={canEditRole(org.role)} editId={params.edit ?? null} />
    </>
  );
}
