import { automationsHeaderInOrgs } from "@holdfast/core/store";
import Link from "next/link";
import { notFound } from "next/navigation";
import { db } from "../../../server/db";
import { requireUser } from "../../../server/session";
import { orUnavailable, unavailable } from "../../../server/unavailable";
import { Unavailable } from "../../unavailable";
import { canEditRole } from "../org";
import { Editor } from "./editor";
import { GoalPanel } from "./goal";
import { LifecycleBar } from "./lifecycle";

export const dynamic = "force-dynamic";

export default async function EditorPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | undefined>> }) {
  const { id } = await params;
  const initialView = (await searchParams).view === "counts" ? "counts" : "edit";
  const user = await orUnavailable(() => requireUser(`/automations/${id}`));
  if (user === unavailable) return <Unavailable />;
  const orgIds = user.memberships.map((m) => m.orgId);
  const found = await orUnavailable(async () =>
    /^aut_[0-9a-f]{32}$/.test(id)
      ? await automationsHeaderInOrgs(db, orgIds, id)
      : undefined,
  );
  if (found === unavailable) return <Unavailable />;
  const a = found;
  if (!a) notFound();
  const m = user.memberships.find((x) => x.orgId === a.orgId);
  if (!m) notFound();
  return (
    <div className="editor-page">
      {/* One compact line: back, the automation's name, its status and lifecycle controls. */}
      <div className="editor-head">
        <Link href={`/automations?org=${m.orgSlug}`} title="All automations">
          &larr; Automations
        </Link>
        <h1>
          {a.name} <span className="muted small">{a.slug}</span>
        </h1>
        <LifecycleBar orgSlug={m.orgSlug} automationId={id} canEdit={canEditRole(m.role)} />
        <GoalPanel orgSlug={m.orgSlug} automationId={id} canEdit={canEditRole(m.role) && a.status !== "archived"} />
      </div>
      <Editor orgSlug={m.orgSlug} automationId={id} automationSlug={a.slug} initialView={initialView} canEdit={canEditRole(m.role) && a.status !== "archived"} canManageConnections={m.role === "owner"} />
    </div>
  );
}
