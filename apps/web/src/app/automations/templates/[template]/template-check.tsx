"use client";

import type { FieldSpec, GraphProblem } from "@holdfast/core/kinds";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useState } from "react";
import { useTRPC } from "../../../../server/trpc/client";

const kindWords: Record<string, string> = { smtp: "email (SMTP)", model: "AI model", crm: "CRM", slack: "Slack", http: "HTTP API" };

/** The server's check of the answers (the journey's publish problems against the organisation), 400 ms after the last change. */
export function useTemplateCheck(orgSlug: string, templateId: string, answers: unknown) {
  const trpc = useTRPC();
  const [settled, setSettled] = useState(answers);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(answers), 400);
    return () => clearTimeout(timer);
  }, [answers]);
  return useQuery(trpc.automations.templateCheck.queryOptions({ orgSlug, templateId, answers: (settled ?? {}) as Record<string, unknown> }));
}

/** Each connection a required question needs and the organisation has none of: what to do, with the link to Settings. */
export function MissingConnections({
  orgSlug,
  fields,
  connections,
  canManage,
}: {
  orgSlug: string;
  fields: FieldSpec[];
  connections: { kind: string }[];
  canManage: boolean;
}) {
  const missing = fields.flatMap((f) => {
    const w = f.widget;
    return w.type === "connection" && f.required && !connections.some((c) => c.kind === w.kind) ? [w.kind] : [];
  });
  if (missing.length === 0) return null;
  return (
    <ul className="flash flash-error missing-connections" data-missing-connections>
      {missing.map((kind) => (
        <li key={kind}>
          There is no {kindWords[kind] ?? kind} connection yet.{" "}
          {canManage ? (
            <>
              Add one with "+ New {kindWords[kind] ?? kind} connection…" below, or in <Link href={`/settings?org=${orgSlug}#connections`}>Settings → Connections</Link>.
            </>
          ) : (
            <>
              Ask an owner to add one in <Link href={`/settings?org=${orgSlug}#connections`}>Settings → Connections</Link>, then come back.
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

/** What would still stop a publish once created (a model budget not set, a member gone), with where to fix it. */
export function PublishProblems({ problems }: { problems: GraphProblem[] }) {
  if (problems.length === 0) return null;
  return (
    <div className="flash flash-error" data-publish-problems>
      <p style={{ margin: 0 }}>Before it can be published:</p>
      <ul>
        {problems.map((p) => (
          <li key={`${p.path}:${p.message}`}>
            {p.message}
            {p.href ? (
              <>
                {" "}
                <Link href={p.href}>Open Settings</Link>
              </>
            ) : null}
          </li>
        ))}
      </ul>
    </div>
  );
}
