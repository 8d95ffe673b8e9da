"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { type ComponentProps, useEffect, useState } from "react";
import { useTRPC } from "../../../server/trpc/client";
import { PreviewWith, usePreviewChoices } from "./preview-choices";
import { PreviewSteps } from "./preview-steps";

/** A value that follows `value` once it has stopped changing for `ms`. */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/**
 * The editor's Preview: pick a sample (the automation's stored sample, one typed in, or a contact of Settings) and
 * see, step by step, what a run of the graph on screen would do. The server walks it without calling anyone or
 * writing anything (drafts.preview); where a preview cannot know (a decision, a reply) the marketer picks.
 */
export function PreviewPanel({ orgSlug, automationId, graph }: { orgSlug: string; automationId: string; graph: unknown }) {
  const trpc = useTRPC();
  const c = usePreviewChoices();
  const { source, contactId, approval, reply } = c;
  const settledGraph = useSettled(graph, 400);
  const settledTyped = useSettled(c.typed, 500);
  const settledQuery = useSettled(c.query, 300);
  const contacts = useQuery({ ...trpc.contacts.list.queryOptions({ orgSlug, query: settledQuery }), enabled: source === "contact" });
  const sample =
    source === "typed" ? { from: "typed" as const, json: settledTyped } : source === "contact" ? { from: "contact" as const, contactId } : { from: "stored" as const };
  const ready = source !== "contact" || contactId !== "";
  const preview = useQuery({
    ...trpc.drafts.preview.queryOptions({ orgSlug, automationId, graph: settledGraph, sample, assume: { approval, reply } }, { retry: false }),
    enabled: ready,
    placeholderData: keepPreviousData,
  });
  const data = preview.data;

  return (
    <section className="preview stack" aria-label="preview">
      <PreviewWith c={c} contacts={contacts.data ?? []} />
      {!ready ? (
        <p className="muted small">Choose a contact to preview with.</p>
      ) : preview.isError ? (
        <p className="flash flash-error small" role="alert">
          {preview.error.message}
        </p>
      ) : !data ? (
        <p className="muted small">Working out what a run would do…</p>
      ) : !data.ok ? (
        <div className="flash flash-error small" role="alert">
          {data.problems.map((p) => (
            <div key={p}>{p}</div>
          ))}
        </div>
      ) : (
        <PreviewResult sampleWords={data.sampleWords} preview={data.preview} />
      )}
    </section>
  );
}

type JourneyPreview = { missing: { words: string }[]; steps: ComponentProps<typeof PreviewSteps>["steps"]; outcome: { kind: string; words: string } };

/** What a run would do: with which sample, the values missing in it, each step, and how the run ends. */
function PreviewResult({ sampleWords, preview }: { sampleWords: string; preview: JourneyPreview }) {
  return (
    <>
      <p className="small muted" data-preview-sample>
        With {sampleWords}.
      </p>
      {preview.missing.length > 0 && (
        <div className="preview-missing" role="status" aria-label="missing values">
          <strong>Missing in this sample</strong>
          <ul>
            {[...new Set(preview.missing.map((m) => m.words))].map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </div>
      )}
      <PreviewSteps steps={preview.steps} />
      <p className={`preview-outcome small ${preview.outcome.kind === "failed" ? "field-error" : "muted"}`}>{preview.outcome.words}</p>
    </>
  );
}
