import Link from "next/link";
import { requireUser } from "../../server/session";
import { orUnavailable, unavailable } from "../../server/unavailable";
import { Unavailable } from "../unavailable";
import { AutomationList } from "./list";
import { canEditRole, pickOrg } from "./org";

export const dynamic = "force-dynamic";

export default async function AutomationsPage({ searchParams }: { searchParams: Promise<{ org?: string }> }) {
  const user = await orUnavailable(() => requireUser("/automations"));
  if (user === unavailable) return <Unavailable />;
  const org = pickOrg(user, (await searchParams).org);
  if (!org) return <p className="empty muted">You are not a member of any organisation yet. Ask an owner to add you.</p>;
  return (
    <>
      <div className="page-head">
        <h1>Automations</h1>
        <Link href={`/automations/saved-emails?org=${org.orgSlug}`} className="small">
          Saved emails: subjects and messages to reuse in send steps
        </Link>
      </div>
      {user.memberships.length > 1 && (
        <p className="small">
          Organisation:{" "}
          {user.memberships.map((m) => (
            <a key={m.orgId} href={`/automations?org=${m.orgSlug}`} className={m.orgId === org.orgId ? "current" : undefined}>
              {m.orgName}{" "}
            </a>
          ))}
        </p>
      )}
      <AutomationList orgSlug={org.orgSlug} canEdit={canEditRole(org.role)} />
    </>
  );
}
