"use client";

import { useQuery } from "@tanstack/react-query";
import { useSearchParams } from "next/navigation";
import { useTRPC } from "../../server/trpc/client";

/**
 * Settings -> Slack: "Add to Slack" (Slack's OAuth v2 through /api/slack/install and /api/slack/oauth) for owners,
 * the organisation's Slack connection as it stands (workspace, or "needs reconnecting" and why), and what the last
 * install did (read from the address Slack's round trip came back to).
 */
export function AddToSlack({ orgSlug, canEdit }: { orgSlug: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const params = useSearchParams();
  const list = useQuery(trpc.connections.list.queryOptions({ orgSlug }));
  const slack = list.data?.find((c) => c.name === "slack" && c.kind === "slack");
  const added = params.get("slack");
  const error = params.get("slack_error");
  const unmatched = (params.get("unmatched") ?? "").split(",").filter(Boolean);
  const broken = slack?.status === "needs_reconnect";
  return (
    <section aria-labelledby="slack-heading">
      <h2 id="slack-heading">Slack</h2>
      {added && (
        <p className="flash flash-ok" role="status">
          Slack {added === "added" ? "added" : "reconnected"}: workspace {params.get("team")}. {params.get("linked") ?? "0"} member
          {params.get("linked") === "1" ? "" : "s"} linked by email
          {unmatched.length > 0 ? `; no Slack user found for ${unmatched.join(", ")} (set one in Members below)` : ""}.
          {Number(params.get("reposted") ?? 0) > 0 ? ` ${params.get("reposted")} approval request(s) will be posted again.` : ""}
        </p>
      )}
      {error && (
        <p className="flash flash-error" role="alert">
          {error}
        </p>
      )}
      {slack ? (
        <p>
          Approvals post to Slack through the connection <strong>slack</strong> ({slack.summary}).{" "}
          {broken ? (
            <span className="warn">Needs reconnecting: {slack.statusReason ?? "Slack refused the token"}. Approvals still wait in the inbox.</span>
          ) : (
            <span className="muted">Connected.</span>
          )}
        </p>
      ) : (
        <p className="muted">Not connected: approvals can be decided in the inbox; with Slack, approvers also get Approve and Reject buttons there.</p>
      )}
      {canEdit ? (
        <form method="post" action={`/api/slack/install?org=${encodeURIComponent(orgSlug)}`} className="inline-form">
          <button type="submit" className={!slack || broken ? "primary" : undefined}>
            {slack ? (broken ? "Reconnect Slack" : "Add to Slack again") : "Add to Slack"}
          </button>
          <span className="small muted"> Members are linked to Slack users by their email; you can change a link in Members.</span>
        </form>
      ) : (
        <p className="small muted">Only an owner can connect Slack.</p>
      )}
    </section>
  );
}
