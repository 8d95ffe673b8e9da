"use client";

import { connectionKind } from "@holdfast/core/kinds";
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../../server/trpc/client";
import { ConnectionForm } from "../../../settings/connection-form";

type Creating = { kind: string; resolve: (name: string | null) => void } | null;

/**
 * "New connection" from a step's connection picker: Settings' typed form in a dialog over the editor; the new
 * connection is picked as soon as it is saved.
 */
export function useNewConnection(orgSlug: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [creating, setCreating] = useState<Creating>(null);
  const newConnection = useCallback((kind: string) => new Promise<string | null>((resolve) => setCreating({ kind, resolve })), []);
  const closeCreating = async (name: string | null) => {
    if (name) await reloadAfterWrite(queryClient, trpc.connections.list.queryKey({ orgSlug }));
    creating?.resolve(name);
    setCreating(null);
  };
  return { creating, newConnection, closeCreating };
}

/** The dialog with Settings' form for the connection being created, if any. */
export function NewConnectionDialog({ orgSlug, creating, onClose }: { orgSlug: string; creating: Creating; onClose: (name: string | null) => void }) {
  const creatingKind = creating ? connectionKind(creating.kind) : undefined;
  if (!creating || !creatingKind) return null;
  return (
    <div className="modal-backdrop">
      <div className="modal" role="dialog" aria-modal="true" aria-label={`New ${creatingKind.label} connection`}>
        <ConnectionForm orgSlug={orgSlug} kind={creatingKind} saved={null} onDone={(_, name) => onClose(name)} onCancel={() => onClose(null)} />
      </div>
    </div>
  );
}
