import { automationsHeaderInOrgs } from "@holdfast/core/store";
import Link from "next/link";
import { notFound } from "next/navigation";
import { db } from "../../../../server/db";
import { requireUser } from "../../../../server/session";
import { orUnavailable, unavailable } from "../../../../server/unavailable";
import { Unavailable } from "../../../unavailable";
import { canEditRole } from "../../org";
import { Versions } from "./versions";

export const dynamic = "force-dynamic";

export default async function VersionsPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await orUnavailable(() => requireUser(`/automations/${id}/versions`));
  if (user === unavailable) return <Unavailable />;
  const orgIds = user.memberships.map((m) => m.orgId);
  const found = await orUnavailable(async () =>
    /^aut_[0-9a-f]{32}$/.test(id)
      ? await automationsHeaderInOrgs(db, orgIds, id)
      : undefined,
  );
  if (found === unavailable) return <Unavailable />;
  const a = found;
  const m = a ? user.memberships.find((x) => x.orgId === a.orgId) : undefined;
  if (!a || !m) notFound();
  return (
    <>
      <p>
        <Link href={`/automations/${id}?org=${m.orgSlug}`}>&larr; Editor</Link>
      </p>
      <h1>{a.name}: versions</h1>
      <Versions orgSlug={m.orgSlug} automationId={id} canEdit={canEditRole(m.role)} />
    </>
  );
}
