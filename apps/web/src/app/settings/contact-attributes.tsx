"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import { SubmitButton } from "../submit-button";
import { useFlash } from "./flash";

const text = (v: unknown) => (v === null || v === undefined ? "" : typeof v === "string" ? v : String(v));
const words = (key: string) => (key === "name" ? "Name" : key === "company" ? "Company" : key.replaceAll("_", " "));

/**
 * What a contact keeps besides its address: name, company and the fields its automations' triggers keep (updated by
 * each delivery; templates use them as {{contact.name}}, {{contact.company}}, {{contact.<field>}}). Editors and owners
 * change them here; an empty value removes one.
 */
export function ContactAttributes({
  orgSlug,
  contactId,
  attributes,
  canEdit,
}: {
  orgSlug: string;
  contactId: string;
  attributes: Record<string, unknown>;
  canEdit: boolean;
}) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const save = useMutation(trpc.contactView.setAttributes.mutationOptions());
  const { attempt, view } = useFlash();
  const custom = Object.keys(attributes).filter((k) => k !== "name" && k !== "company").sort();
  const keys = ["name", "company", ...custom];
  const [newKey, setNewKey] = useState("");
  const [newValue, setNewValue] = useState("");

  if (!canEdit) {
    return (
      <dl className="facts" data-testid="contact-attributes">
        {keys.map((k) => (
          <div key={k} style={{ display: "contents" }}>
            <dt>{words(k)}</dt>
            <dd data-attribute={k}>{text(attributes[k]) || <span className="muted">not known</span>}</dd>
          </div>
        ))}
      </dl>
    );
  }
  return (
    <form
      className="stack contact-attributes"
      data-testid="contact-attributes"
      aria-label="Name, company and other fields"
      onSubmit={async (e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const next: Record<string, string> = {};
        for (const k of keys) next[k] = (form.elements.namedItem(`attr-${k}`) as HTMLInputElement).value;
        if (newKey.trim() !== "") next[newKey.trim()] = newValue;
        await attempt(async () => {
          const r = await save.mutateAsync({ orgSlug, contactId, attributes: next });
          await reloadAfterWrite(qc, trpc.contactView.get.queryKey({ orgSlug, contactId }));
          setNewKey("");
          setNewValue("");
          return r.message;
        });
      }}
    >
      {view}
      {keys.map((k) => (
        <label key={`${k}:${text(attributes[k])}`}>
          {words(k)}
          <input name={`attr-${k}`} data-attribute={k} defaultValue={text(attributes[k])} maxLength={500} />
        </label>
      ))}
      <div className="row-inline">
        <label>
          Another field
          <input name="attr-new-key" placeholder="job_title" value={newKey} maxLength={64} onChange={(e) => setNewKey(e.target.value)} />
        </label>
        <label>
          Its value
          <input name="attr-new-value" value={newValue} maxLength={500} onChange={(e) => setNewValue(e.target.value)} />
        </label>
      </div>
      <p className="small muted">
        Emails use these as {"{{contact.name}}"}, {"{{contact.company}}"} and {"{{contact.<field>}}"}. The next form submission that sends a value replaces it.
      </p>
      <SubmitButton pending={save.isPending}>Save name and fields</SubmitButton>
    </form>
  );
}
