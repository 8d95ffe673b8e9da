import Link from "next/link";
import { z } from "zod";
import { db } from "../server/db";
import { type FirstRequest, firstRequest } from "../server/first-request";
import { automationsFor, displayStatuses, listRuns } from "../server/runs";
import { requireUser } from "../server/session";
import { orUnavailable, unavailable } from "../server/unavailable";
import { Unavailable } from "./unavailable";
import { viewerClock } from "../server/viewer-zone";
import { At, RunStatusBadge } from "./ui";
import { ViewerZone } from "./viewer-zone";
import { CopyText } from "./copy-text";
import { runsAt, runsAtFilters } from "../server/runs-at";
import { RunsAtList } from "./runs-at";

export const dynamic = "force-dynamic";

/** The empty runs list's first instruction: a request that starts a run of one of the organisation's automations. */
function FirstRun({ first }: { first: FirstRequest }) {
  if (first.kind === "none") {
    return (
      <div className="empty" data-first-request="none">
        <p className="muted">No runs yet, and no automation to start one.</p>
        {first.canCreate ? <Link href="/automations">Create an automation</Link> : <p className="muted">Ask an owner or editor to create an automation.</p>}
      </div>
    );
  }
  const editor = `/automations/${first.automationId}?org=${first.orgSlug}`;
  const draft = first.published ? null : (
    <p className="muted small">
      {first.name} is a draft: <Link href={editor}>publish it</Link> first, until then deliveries are refused.
    </p>
  );
  if (first.kind === "panel") {
    return (
      <div className="empty" data-first-request={first.why}>
        <p className="muted">
          No runs yet.{" "}
          {first.why === "signed"
            ? `${first.name}'s sender signs each request with its secret: its trigger panel has the URL and the secret to set up the sender.`
            : `${first.name} starts a run when its form tool posts to its URL: an owner or editor can copy the URL from its trigger panel.`}
        </p>
        <Link href={editor}>Open {first.name}'s trigger</Link>
        {draft}
      </div>
    );
  }
  return (
    <div className="empty" data-first-request="request">
      <p className="muted">No runs yet. This request posts a form submission to {first.name} and starts a run (your form tool posts the same way):</p>
      <CopyText text={first.curl} label="Copy request" />
      {draft}
    </div>
  );
}

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
  if (raw.at) {
    // The runs behind a count on the canvas ("Runs at "Send the email" now"): a list of its own.
    const parsed = runsAtFilters.safeParse(raw);
    const at = parsed.success ? await orUnavailable(() => runsAt(db, user.memberships, parsed.data)) : null;
    if (at === unavailable) return <Unavailable />;
    if (at) {
      const { zone, clock } = await viewerClock();
      return (
        <>
          <ViewerZone current={zone} />
          <RunsAtList at={at} clock={clock} />
        </>
      );
    }
  }
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
  const first = runs.length === 0 && !filtered ? await orUnavailable(() => firstRequest(db, user.memberships)) : null;
  if (first === unavailable) return <Unavailable />;
  // Times in the viewer's zone (their browser's, told by a cookie), UTC until it is known.
  const { zone, clock } = await viewerClock();
  return (
    <>
      <ViewerZone current={zone} />
      <h1>Runs</h1>
      <RunFilters f={f} automations={automations} filtered={filtered} />
      {runs.length === 0 ? (
        filtered ? (
          <p className="empty muted">No runs match these filters.</p>
        ) : (
          first && <FirstRun first={first} />
        )
      ) : (
        <RunsTable runs={runs} clock={clock} />
      )}
    </>
  );
}

type Filters = z.infer<typeof filters>;

/** Automation, version, status and contact: a GET form, so a filtered list is a link. */
function RunFilters({ f, automations, filtered }: { f: Filters; automations: Awaited<ReturnType<typeof automationsFor>>; filtered: boolean }) {
  return (
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
  );
}

function RunsTable({ runs, clock }: { runs: Awaited<ReturnType<typeof listRuns>>; clock: Awaited<ReturnType<typeof viewerClock>>["clock"] }) {
  return (
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
  );
}
