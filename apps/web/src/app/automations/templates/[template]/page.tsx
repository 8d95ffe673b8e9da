import { templateOf } from "@holdfast/core/kinds";
import Link from "next/link";
import { notFound } from "next/navigation";
import { requireUser } from "../../../../server/session";
import { orUnavailable, unavailable } from "../../../../server/unavailable";
import { Unavailable } from "../../../unavailable";
import { canEditRole, pickOrg } from "../../org";
import { TemplateSteps } from "../template-steps";
import { TemplateForm } from "./template-form";

export const dynamic = "force-dynamic";

/** One template's questions on one page, then Create: the automation opens in the editor, ready to publish. */
export default async function TemplatePage({ params, searchParams }: { params: Promise<{ template: string }>; searchParams: Promise<{ org?: string }> }) {
  const { template: id } = await params;
  const template = templateOf(id);
  if (!template) notFound();
  const user = await orUnavailable(() => requireUser(`/automations/templates/${id}`));
  if (user === unavailable) return <Unavailable />;
  const org = pickOrg(user, (await searchParams).org);
  if (!org) return <p className="empty muted">You are not a member of any organisation yet. Ask an owner to add you.</p>;
  return (
    <div className="template-page">
      <p className="small">
        <Link href={`/automations/templates?org=${org.orgSlug}`}>&larr; All templates</Link>
      </p>
      <h1>{template.name}</h1>
      <p>{template.purpose}</p>
      <details className="small">
        <summary>The steps it makes</summary>
        <TemplateSteps steps={template.steps} />
      </details>
      {canEditRole(org.role) ? (
        <TemplateForm orgSlug={org.orgSlug} templateId={template.id} canManageConnections={org.role === "owner"} />
      ) : (
        <p className="flash flash-error">Only owners and editors create automations (you are {org.role}): ask one of them.</p>
      )}
    </div>
  );
}
