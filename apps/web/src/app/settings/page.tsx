import { env } from "../../env";
import { requireUser } from "../../server/session";
import { orUnavailable, unavailable } from "../../server/unavailable";
import { Unavailable } from "../unavailable";
import { pickOrg } from "../automations/org";
import { Settings } from "./settings";

export const dynamic = "force-dynamic";

export default async function SettingsPage({ searchParams }: { searchParams: Promise<{ org?: string }> }) {
  const user = await orUnavailable(() => requireUser("/settings"));
  if (user === unavailable) return <Unavailable />;
  const org = pickOrg(user, (await searchParams).org);
  if (!org) return <p className="empty muted">You are not a member of any organisation yet.</p>;
  return (
    <>
      <h1>Settings: {org.orgName}</h1>
      {/* Invitations are emailed by the sweeper when the deployment has a system mailbox (members.tsx). */}
      <Settings orgSlug={org.orgSlug} role={org.role} invitesByEmail={env.HOLDFAST_SYSTEM_SMTP_URL !== undefined} />
    </>
  );
}
