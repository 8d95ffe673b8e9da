import { buildStory } from "@holdfast/core/story";
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { db } from "../../../server/db";
import { mayActOnRuns, runDetail } from "../../../server/runs";
import { requireUser } from "../../../server/session";
import { orUnavailable, unavailable } from "../../../server/unavailable";
import { viewerZone } from "../../../server/viewer-zone";
import { AutoRefresh } from "../../auto-refresh";
import { Unavailable } from "../../unavailable";
import { ViewerZone } from "../../viewer-zone";
import { RunDetails } from "./sections/details";
import { EmailCard } from "./sections/email-card";
import { RunHeader } from "./sections/header";
import { PathTaken } from "./sections/path-taken";
import { Summary } from "./sections/summary";
import { timeIn } from "./sections/time";
import { WhatHappened } from "./sections/what-happened";

export const dynamic = "force-dynamic";

interface Props {
  params: Promise<{ id: string }>;
  searchParams: Promise<{ done?: string; error?: string }>;
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Run ${(await params).id} - Holdfast` };
}

/**
 * The run page for people: the summary first (what state the run is in, why, and the one button that fixes it), the
 * path taken on the graph, the story as sentences, the email it sent; everything operators had (timeline, JSON,
 * attempts, effects, timers, signals, approvals) under Details. The sentences come from core (run/runs/story.ts), with
 * times in the viewer's zone (a cookie the browser sets, app/viewer-zone.tsx) and the contact's zone beside. This
 * loads the run once and hands each section (./sections/) what it shows.
 */
export default async function RunPage({ params, searchParams }: Props) {
  const { id } = await params;
  const { done, error } = await searchParams;
  const loaded = await orUnavailable(async () => {
    const user = await requireUser(`/runs/${id}`);
    return { user, detail: await runDetail(db, user.memberships.map((m) => m.orgId), id) };
  });
  if (loaded === unavailable) return <Unavailable />;
  const { user, detail } = loaded;
  if (!detail) notFound();
  const { run, steps, timeline, approvals, timers, signals, graph, uncertain } = detail;
  const zone = await viewerZone();
  const story = buildStory({
    run,
    steps,
    timeline,
    timers,
    approvals,
    signals,
    graph,
    contact: detail.contact ? { email: detail.contact, timeZone: detail.contactZone, ...(detail.contactId ? { id: detail.contactId } : {}), ...(detail.contactConsent ? { consent: detail.contactConsent } : {}) } : null,
    viewerZone: zone ?? "UTC",
    uncertain,
  });
  const live = run.status === "running";
  const role = user.memberships.find((m) => m.orgId === run.orgId)?.role;
  const mayAct = mayActOnRuns(role);

  return (
    <>
      <ViewerZone current={zone} />
      {live && <AutoRefresh ms={2_000} />}
      <RunHeader detail={detail} clock={story.clock} role={role} done={done} error={error} />
      <Summary detail={detail} story={story} zone={zone} role={role} mayAct={mayAct} canAct={mayAct && live} />
      <PathTaken graph={graph} steps={steps} path={story.path} />
      <WhatHappened sentences={story.sentences} />
      {story.email ? (
        <EmailCard
          email={story.email}
          story={story}
          test={run.test}
          sent={detail.emails.find((m) => m.nodeId === story.email?.nodeId && (story.email.messageId === null || m.messageId === story.email.messageId)) ?? null}
          rates={detail.emailRates.find((r) => r.nodeId === story.email?.nodeId) ?? null}
          edits={detail.approvalEdits.filter((e) => detail.approvals.some((a) => a.id === e.approvalId && a.emailDigest?.node === story.email?.nodeId))}
        />
      ) : null}
      <RunDetails detail={detail} viewer={story.clock.viewer} when={timeIn(story.clock.viewer)} />
    </>
  );
}
