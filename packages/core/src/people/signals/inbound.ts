import type { Db } from "@holdfast/db";
import { HoldfastError } from "../../base/errors";
import { type InboundEmail, type IngestOutcome, ingestEmailReply } from "./email";
import { resolveReplyRoutes } from "./routing";

/** A reply that names neither a routing address this deployment issued nor an organisation. */
export class UnroutableReplyError extends HoldfastError {
  constructor(
    message: string,
    readonly refused: string[],
  ) {
    super("unroutable_reply", message);
  }
}

export interface InboundOutcome extends IngestOutcome {
  org: string;
  /** Matched through a routing address (Reply-To) rather than the organisation's own address or ?org=. */
  routed: boolean;
}

/** How a caller runs a piece of work in a database scope (the web's row-level security); default: as it is. */
export type ScopeRunner = <T>(scope: { allOrgs?: boolean; orgIds?: string[] }, work: () => Promise<T>) => Promise<T>;

/**
 * An inbound email from any path (SMTP receiver, JSON webhook, a provider's inbound parse), by the addresses it was
 * sent to: each verified routing address among them (`reply+<token>@…`) matches it to the message its step sent, in
 * that step's organisation; with none, `orgSlug` (the organisation's own address or ?org=) decides and In-Reply-To
 * and References correlate as before. A routing address this deployment did not issue is refused, never guessed at.
 * The sender rule (only the recipient may answer) holds either way: ingestEmailReply applies it.
 */
export async function ingestInboundEmail(
  db: Db,
  input: { recipients: string[]; orgSlug?: string | null; email: InboundEmail },
  scope: ScopeRunner = (_s, work) => work(),
): Promise<InboundOutcome[]> {
  // Reading the step a token names crosses organisations; nothing of it is used unless the token's MAC matches.
  const { routes, refused } = await scope({ allOrgs: true }, () => resolveReplyRoutes(db, input.recipients));
  const outcomes: InboundOutcome[] = [];
  const byOrg = new Map<string, { orgId: string; ids: string[] }>();
  for (const r of routes) {
    const entry = byOrg.get(r.orgSlug) ?? { orgId: r.orgId, ids: [] };
    if (r.messageId) entry.ids.push(r.messageId);
    byOrg.set(r.orgSlug, entry);
  }
  for (const [org, { orgId, ids }] of byOrg) {
    const outcome = await scope({ orgIds: [orgId] }, () => ingestEmailReply(db, org, input.email, { routedMessageIds: ids }));
    outcomes.push({ ...outcome, org, routed: true });
  }
  if (outcomes.length > 0) return outcomes;
  if (refused.length > 0 && !input.orgSlug) {
    throw new UnroutableReplyError("the reply address is not one this deployment issued (forged or changed): nothing was stored", refused);
  }
  if (!input.orgSlug) {
    throw new UnroutableReplyError("the email was sent to no routing address (reply+…@your inbound domain) and names no organisation", []);
  }
  const org = input.orgSlug;
  const outcome = await ingestEmailReply(db, org, input.email);
  return [{ ...outcome, org, routed: false }];
}
