"use client";

import { variablesAt } from "@holdfast/core/kinds";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../../../server/trpc/client";
import type { FormContext } from "../../../forms/widgets";
import type { FlowNode, GraphJson } from "./graph-model";

/**
 * What the step forms offer: the organisation's connections and members, the trigger's sample payload and the
 * variables a step can use. Null while no single step is selected.
 */
export function useFormContext(o: {
  orgSlug: string;
  automationId: string;
  canEdit: boolean;
  canManageConnections: boolean;
  current: FlowNode | undefined;
  graph: GraphJson;
  newConnection: (kind: string) => Promise<string | null>;
}): FormContext | null {
  const { orgSlug, current, graph, canEdit } = o;
  const trpc = useTRPC();
  const connectionsList = useQuery(trpc.connections.list.queryOptions({ orgSlug }));
  const membersList = useQuery(trpc.members.list.queryOptions({ orgSlug }));
  const sample = useQuery(trpc.triggers.sample.queryOptions({ orgSlug, automationId: o.automationId }, { refetchOnWindowFocus: true }));
  if (!current) return null;
  return {
    orgSlug,
    nodeId: current.id,
    graph,
    variables: variablesAt(graph, current.id, sample.data ?? null),
    sample: sample.data ?? null,
    connections: (connectionsList.data ?? []).map((c) => ({ name: c.name, kind: c.kind, status: c.status })),
    members: (membersList.data ?? []).map((m) => ({ email: m.email, name: m.name, role: m.role })),
    canEdit,
    // Only owners add connections (they hold the secrets); others are told whom to ask.
    ...(o.canManageConnections ? { newConnection: o.newConnection } : {}),
  };
}
