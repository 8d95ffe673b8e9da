import Link from "next/link";
import { db } from "../server/db";
import { recentRuns } from "../server/runs";
import { StatusBadge, Time } from "./ui";

export const dynamic = "force-dynamic";

const demoCurl = `curl -X POST http://localhost:3000/api/hooks/demo/demo-follow-up -H 'content-type: application/json' -H 'webhook-id: evt_1' -d '{"id":"evt_1","plan":"pro","email":"maya@example.com"}'`;

export default async function HomePage() {
  const runs = await recentRuns(db, 50);
  return (
    <>
      <h1>Recent runs</h1>
      <p className="hint">
        Start a demo run (send it again to see the same run come back as a duplicate):
        <code className="block">{demoCurl}</code>
      </p>
      {runs.length === 0 ? (
        <p className="muted">No runs yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Run</th>
              <th>Org</th>
              <th>Automation</th>
              <th>Version</th>
              <th>Status</th>
              <th>Start key</th>
              <th>Created</th>
              <th>Finished</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id}>
                <td>
                  <Link href={`/runs/${r.id}`} className="mono">
                    {r.id}
                  </Link>
                </td>
                <td>{r.orgSlug}</td>
                <td>{r.automationSlug}</td>
                <td>{r.version ?? "-"}</td>
                <td>
                  <StatusBadge status={r.status} />
                </td>
                <td className="mono small wrap">{r.startKey}</td>
                <td>
                  <Time at={r.createdAt} />
                </td>
                <td>
                  <Time at={r.finishedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
