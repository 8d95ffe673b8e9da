"use client";

import { useState } from "react";

type Source = "stored" | "typed" | "contact";

/** What the preview runs with: the sample's source (with the typed JSON or the chosen contact) and the assumptions. */
export function usePreviewChoices() {
  const [source, setSource] = useState<Source>("stored");
  const [typed, setTyped] = useState('{\n  "email": "ann@example.com",\n  "first_name": "Ann"\n}');
  const [query, setQuery] = useState("");
  const [contactId, setContactId] = useState("");
  const [approval, setApproval] = useState<"approved" | "rejected">("approved");
  const [reply, setReply] = useState(true);
  return { source, setSource, typed, setTyped, query, setQuery, contactId, setContactId, approval, setApproval, reply, setReply };
}

export type PreviewChoices = ReturnType<typeof usePreviewChoices>;

const sources = [
  ["stored", "The automation's sample"],
  ["typed", "A sample I type"],
  ["contact", "A contact"],
] as const;

/** "Preview with": the sample (stored, typed or a contact's), and whether approvals pass and replies come. */
export function PreviewWith({ c, contacts }: { c: PreviewChoices; contacts: { id: string; email: string; timeZone: string | null }[] }) {
  return (
    <fieldset className="preview-sample stack">
      <legend>Preview with</legend>
      <div className="row-inline preview-sources">
        {sources.map(([value, label]) => (
          <label key={value} className="check">
            <input type="radio" name="preview-source" value={value} checked={c.source === value} onChange={() => c.setSource(value)} /> {label}
          </label>
        ))}
      </div>
      {c.source === "typed" && (
        <label>
          Sample payload (JSON)
          <textarea name="preview-json" rows={6} value={c.typed} onChange={(e) => c.setTyped(e.target.value)} spellCheck={false} />
        </label>
      )}
      {c.source === "contact" && (
        <div className="row-inline">
          <input name="preview-contact-search" placeholder="Search contacts by email" value={c.query} onChange={(e) => c.setQuery(e.target.value)} />
          <select name="preview-contact" aria-label="Contact" value={c.contactId} onChange={(e) => c.setContactId(e.target.value)}>
            <option value="">Choose a contact…</option>
            {contacts.map((x) => (
              <option key={x.id} value={x.id}>
                {x.email}
                {x.timeZone ? ` (${x.timeZone})` : ""}
              </option>
            ))}
          </select>
        </div>
      )}
      <div className="row-inline small preview-assume">
        <label>
          Approvals are{" "}
          <select name="preview-approval" value={c.approval} onChange={(e) => c.setApproval(e.target.value as "approved" | "rejected")}>
            <option value="approved">approved</option>
            <option value="rejected">rejected</option>
          </select>
        </label>
        <label>
          Replies:{" "}
          <select name="preview-reply" value={c.reply ? "yes" : "no"} onChange={(e) => c.setReply(e.target.value === "yes")}>
            <option value="yes">a reply comes</option>
            <option value="no">no reply</option>
          </select>
        </label>
      </div>
      <p className="small muted">Nothing is sent, called or saved: this only shows what a run would do.</p>
    </fieldset>
  );
}
