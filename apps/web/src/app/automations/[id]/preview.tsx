"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useTRPC } from "../../../server/trpc/client";
import { PreviewSteps } from "./preview-steps";

/**
 * The editor's Preview: pick a sample (the automation's stored sample, one typed in, or a contact of Settings) and
 * see, step by step, what a run of the graph on screen would do. The server walks it without calling anyone or
 * writing anything (drafts.preview); where a preview cannot know (a decision, a reply) the marketer picks.
 */
type Source = "stored" | "typed" | "contact";

/** A value that follows `value` once it has stopped changing for `ms`. */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

export function PreviewPanel({ orgSlug, automationId, graph }: { orgSlug: string; automationId: string; graph: unknown }) {
  const trpc = useTRPC();
  const [source, setSource] = useState<Source>("stored");
  const [typed, setTyped] = useState('{\n  "email": "ann@example.com",\n  "first_name": "Ann"\n}');
  const [query, setQuery] = useState("");
  const [contactId, setContactId] = useState("");
  const [approval, setApproval] = useState<"approved" | "rejected">("approved");
  const [reply, setReply] = useState(true);
  const settledGraph = useSettled(graph, 400);
  const settledTyped = useSettled(typed, 500);
  const settledQuery = useSettled(query, 300);
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
      <fieldset className="preview-sample stack">
        <legend>Preview with</legend>
        <div className="row-inline preview-sources">
          {(
            [
              ["stored", "The automation's sample"],
              ["typed", "A sample I type"],
              ["contact", "A contact"],
            ] as const
          ).map(([value, label]) => (
            <label key={value} className="check">
              <input type="radio" name="preview-source" value={value} checked={source === value} onChange={() => setSource(value)} /> {label}
            </label>
          ))}
        </div>
        {source === "typed" && (
          <label>
            Sample payload (JSON)
            <textarea name="preview-json" rows={6} value={typed} onChange={(e) => setTyped(e.target.value)} spellCheck={false} />
          </label>
        )}
        {source === "contact" && (
          <div className="row-inline">
            <input name="preview-contact-search" placeholder="Search contacts by email" value={query} onChange={(e) => setQuery(e.target.value)} />
            <select name="preview-contact" aria-label="Contact" value={contactId} onChange={(e) => setContactId(e.target.value)}>
              <option value="">Choose a contact…</option>
              {(contacts.data ?? []).map((c) => (
                <option key={c.id} value={c.id}>
                  {c.email}
                  {c.timeZone ? ` (${c.timeZone})` : ""}
                </option>
              ))}
            </select>
          </div>
        )}
        <div className="row-inline small preview-assume">
          <label>
            Approvals are{" "}
            <select name="preview-approval" value={approval} onChange={(e) => setApproval(e.target.value as "approved" | "rejected")}>
              <option value="approved">approved</option>
              <option value="rejected">rejected</option>
            </select>
          </label>
          <label>
            Replies:{" "}
            <select name="preview-reply" value={reply ? "yes" : "no"} onChange={(e) => setReply(e.target.value === "yes")}>
              <option value="yes">a reply comes</option>
              <option value="no">no reply</option>
            </select>
          </label>
        </div>
        <p className="small muted">Nothing is sent, called or saved: this only shows what a run would do.</p>
      </fieldset>
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
        <>
          <p className="small muted" data-preview-sample>
            With {data.sampleWords}.
          </p>
          {data.preview.missing.length > 0 && (
            <div className="preview-missing" role="status" aria-label="missing values">
              <strong>Missing in this sample</strong>
              <ul>
                {[...new Set(data.preview.missing.map((m) => m.words))].map((w) => (
                  <li key={w}>{w}</li>
                ))}
              </ul>
            </div>
          )}
          <PreviewSteps steps={data.preview.steps} />
          <p className={`preview-outcome small ${data.preview.outcome.kind === "failed" ? "field-error" : "muted"}`}>{data.preview.outcome.words}</p>
        </>
      )}
    </section>
  );
}
