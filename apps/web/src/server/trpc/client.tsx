"use client";

import { QueryClient, QueryClientProvider, type QueryKey } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { type ReactNode, useState } from "react";
import superjson from "superjson";
import type { AppRouter } from "./router";
import { wordsLink } from "./words-link";

export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();

/** The builder's data layer: tRPC over one batched HTTP link, React Query for caching and mutations. */
export function TrpcProvider({ children }: { children: ReactNode }) {
  const [queryClient] = useState(() => new QueryClient({ defaultOptions: { queries: { staleTime: 5_000, retry: 1 } } }));
  const [client] = useState(() => createTRPCClient<AppRouter>({ links: [wordsLink, httpBatchLink({ url: "/api/trpc", transformer: superjson })] }));
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={client} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}

/**
 * Reloads what a write changed: every write in the browser ends with this, never with invalidateQueries alone.
 * While a query's first load is still under way (no data yet), invalidateQueries hands back that load instead of
 * starting another, and that load may have read the database before the write committed: the list then showed the
 * old rows, with no further reload coming (a suppression or contact just saved, missing from its list, on a page slow
 * to load). Cancelling first drops that load, so the reload starts after the write; a value set by hand meanwhile
 * (setQueryData) is kept.
 */
export async function reloadAfterWrite(queryClient: QueryClient, queryKey: QueryKey): Promise<void> {
  await queryClient.cancelQueries({ queryKey });
  await queryClient.invalidateQueries({ queryKey });
}
