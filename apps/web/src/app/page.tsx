import Link from "next/link";
import { z } from "zod";
import { db } from "../server/db";
import { automationsFor, displayStatuses, listRuns } from "../server/runs";
import { requireUser } from "../server/session";
import { orUnavailable, unavailable } from "../server/unavailable";
import { Unavailable } from "./unavailable";
import { viewerClock } from "../server/viewer-zone";
import { At, RunStatusBadge } from "./ui";
import { ViewerZone } from "./viewer-zone";

export const dynamic = "force-dynamic";

const demoCurl = `curl -X POST http://localhost:3000/api/hooks/demo/demo-follow-up -H 'content-type: application/json' -H 'webhook-id: evt_1' -d '{"id":"evt_1","plan":"pro","email":"maya@example.com"}'`;

const filters = z.object({
  automation: z.string().max(100).regex(/^[a-z0-9-]*$/).optional().catch(undefined),
  version: z.coerce.number().int().min(1).optional().catch(undefined),
  status: z.enum(displayStatuses).optional().catch(undefined),
  contact: z.string().trim().max(320).optional().catch(undefined),
});

export default async function RunsPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const user = await orUnavailable(() => requireUser("/"));
  if (user === unavailable) return <Unavailable />;
  const raw = await searchParams;
  const f = filters.parse({
    automation: raw.automation || undefined,
    version: raw.version || undefined,
    status: raw.status || undefined,
    contact: raw.contact || undefined,
  });
  const orgIds = user.memberships.map((m) => m.orgId);
  const lists = await orUnavailable(() => Promise.all([listRuns(db, orgIds, f), automationsFor(db, orgIds)]));
  if (lists === unavailable) return <Unavailable />;
  const [runs, automations] = lists;
  const filtered = Boolean(f.automation || f.version || f.status || f.contact);
  // Times in the viewer's zone (their browser's, told by a cookie), UTC until it is known.
  const { zone, clock } = await viewerClock();
  return (
    <>
      <ViewerZone current={zone} />
      <h1>Runs</h1>
      <form className="filters" method="get">
        <label>
          Automation
          <select name="automation" defaultValue={f.automation ?? ""}>
            <option value="">All</option>
            {automations.map((a) => (
              <option key={a.slug} value={a.slug}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Version
          <input name="version" type="number" min={1} defaultValue={f.version ?? ""} />
        </label>
        <label>
          Status
          <select name="status" defaultValue={f.status ?? ""}>
            <option value="">Any</option>
            {displayStatuses.map((s) => (
              <option key={s} value={s}>
                {s.replace("_", " ")}
              </option>
            ))}
          </select>
        </label>
        <label>
          Contact
          <input name="contact" placeholder="email contains" defaultValue={f.contact ?? ""} />
        </label>
        <button type="submit">Filter</button>
        {filtered ? <Link href="/">Clear</Link> : null}
      </form>
      {runs.length === 0 ? (
        filtered ? (
          <p className="empty muted">No runs match these filters.</p>
        ) : (
          <div className="empty">
            <p className="muted">No runs yet. Start one by sending the trigger's webhook, for the demo:</p>
            <code className="block">{demoCurl}</code>
          </div>
        )
      ) : (
        <table className="runs">
          <thead>
            <tr>
              <th>Run</th>
              <th>Automation</th>
              <th>Version</th>
              <th>Status</th>
              <th>Contact</th>
              <th>Started</th>
              <th>Finished</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id} data-run={r.id}>
                <td>
                  <Link href={`/runs/${r.id}`} className="mono">
                    {r.id}
                  </Link>
                  {r.test ? (
                    <>
                      {" "}
                      <span className="badge badge-ready" title="Started from the editor's Test run with the sample payload">
                        Test
                      </span>
                    </>
                  ) : null}
                </td>
                <td>
                  {r.automationName} <span className="muted small">{r.orgSlug}</span>
                </td>
                <td>{r.version ?? "-"}</td>
                <td>
                  <RunStatusBadge status={r.status} />
                </td>
                <td>{r.contact ?? <span className="muted">-</span>}</td>
                <td>
                  <At at={r.createdAt} clock={clock} />
                </td>
                <td>
                  <At at={r.finishedAt} clock={clock} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
