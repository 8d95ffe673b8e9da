import { automationsForFirstRequest } from "@holdfast/core/store";
import { triggerPath, triggerSettings } from "@holdfast/core/versions";
import type { Db } from "@holdfast/db";
import { env } from "../env";

/** What the runs page's empty state shows: a request that starts a run, or where to go for one. */
export type FirstRequest =
  /** No automation yet: create one (owners and editors can). */
  | { kind: "none"; canCreate: boolean }
  /** A form tool's URL (token included): a copyable request. */
  | { kind: "request"; automationId: string; orgSlug: string; name: string; published: boolean; url: string; curl: string }
  /** A signed sender (the signature needs the secret), or a URL whose token this person may not see: its trigger panel. */
  | { kind: "panel"; automationId: string; orgSlug: string; name: string; published: boolean; why: "signed" | "token_hidden" };

/**
 * The runs page's first instruction, for one of the person's organisations' automations: the trigger's real URL on
 * the web's public address (as the trigger panel builds it), its token only for owners and editors.
 */
export async function firstRequest(db: Db, memberships: { orgId: string; orgSlug: string; role: string }[]): Promise<FirstRequest> {
  const canCreate = memberships.some((m) => m.role === "owner" || m.role === "editor");
  if (memberships.length === 0) return { kind: "none", canCreate };
  const a = await automationsForFirstRequest(
    db,
    memberships.map((m) => m.orgId),
  );
  if (!a) return { kind: "none", canCreate };
  const member = memberships.find((m) => m.orgId === a.orgId);
  if (!member) return { kind: "none", canCreate };
  const place = { automationId: a.id, orgSlug: member.orgSlug, name: a.name, published: a.published };
  if (a.triggerAuth === "signed") return { kind: "panel", ...place, why: "signed" };
  if (member.role !== "owner" && member.role !== "editor") return { kind: "panel", ...place, why: "token_hidden" };
  const { urlToken } = await triggerSettings(db, a.orgId, a.id, a.triggerAuth);
  const url = `${env.HOLDFAST_PUBLIC_URL.replace(/\/$/, "")}${triggerPath(member.orgSlug, a.slug, "url_token", urlToken)}`;
  return { kind: "request", ...place, url, curl: `curl -X POST '${url}' -d 'email=maya@example.com&name=Maya&company=Acme'` };
}
