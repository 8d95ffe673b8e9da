import { noticesOpenForOrgs } from "@holdfast/core/store";
import type { SessionUser } from "@holdfast/core/people";
import Link from "next/link";
import { db } from "../server/db";

/**
 * The banner over every page while a connection of one of the user's organisations is broken (needs a person to
 * reconnect it): which connection, since when, how many runs wait on it, and where to fix it. One line per break
 * (connection_notices); it goes away by itself once the connection works again.
 */
export async function BrokenConnections({ user }: { user: SessionUser | null }) {
  if (!user || user.memberships.length === 0) return null;
  const notices = await noticesOpenForOrgs(db, user.memberships.map((m) => m.orgId)).catch(() => []);
  if (notices.length === 0) return null;
  const many = user.memberships.length > 1;
  return (
    <div className="flash flash-error broken-connections" role="alert" data-testid="broken-connections">
      {notices.map((n) => {
        const owner = user.memberships.find((m) => m.orgId === n.orgId)?.role === "owner";
        const runs = n.parkedRuns === 1 ? "1 run is waiting" : `${n.parkedRuns} runs are waiting`;
        return (
          <p key={n.id} style={{ margin: "0.2rem 0" }}>
            <strong>
              The connection “{n.connectionName}”{many ? ` of ${n.orgName}` : ""} needs reconnecting
            </strong>
            : {runs} on it{n.reason ? ` (${n.reason})` : ""}.{" "}
            {owner ? (
              <Link href={`/settings?org=${encodeURIComponent(n.orgSlug)}`}>Reconnect it in Settings</Link>
            ) : (
              <>
                An owner can reconnect it in <Link href={`/settings?org=${encodeURIComponent(n.orgSlug)}`}>Settings</Link>.
              </>
            )}
          </p>
        );
      })}
    </div>
  );
}
