import { automationTemplates } from "@holdfast/core/kinds";
import Link from "next/link";
import { requireUser } from "../../../server/session";
import { orUnavailable, unavailable } from "../../../server/unavailable";
import { Unavailable } from "../../unavailable";
import { canEditRole, pickOrg } from "../org";
import { TemplateSteps } from "./template-steps";

export const dynamic = "force-dynamic";

/** The gallery: each template's purpose and its journey in words, and the way to its questions. */
export default async function TemplatesPage({ searchParams }: { searchParams: Promise<{ org?: string }> }) {
  const user = await orUnavailable(() => requireUser("/automations/templates"));
  if (user === unavailable) return <Unavailable />;
  const org = pickOrg(user, (await searchParams).org);
  if (!org) return <p className="empty muted">You are not a member of any organisation yet. Ask an owner to add you.</p>;
  const canEdit = canEditRole(org.role);
  return (
    <>
      <p className="small">
        <Link href={`/automations?org=${org.orgSlug}`}>&larr; Automations</Link>
      </p>
      <h1>New automation from a template</h1>
      <p className="muted">
        Pick a journey to start from. You answer a few questions (which mailbox, who approves), and it opens in the editor ready to publish; change
        any step there.
      </p>
      {!canEdit && <p className="flash flash-error">Only owners and editors create automations (you are {org.role}): ask one of them.</p>}
      <ul className="cards template-gallery">
        {automationTemplates.map((t) => (
          <li key={t.id} className="card" data-template={t.id}>
            <div className="card-head">
              <h2 className="card-title">{t.name}</h2>
              <span>{t.purpose}</span>
            </div>
            <TemplateSteps steps={t.steps} />
            <p className="small muted">{t.note}</p>
            {canEdit && (
              <Link className="button-link" href={`/automations/templates/${t.id}?org=${org.orgSlug}`}>
                Start from {t.name}
              </Link>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}
