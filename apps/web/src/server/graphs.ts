import { GraphCache } from "@holdfast/core/versions";

// Published versions are immutable: one cache per process (kept on globalThis across `next dev` reloads).
const cache = globalThis as typeof globalThis & { holdfastGraphs?: GraphCache };
export const graphs: GraphCache = cache.holdfastGraphs ?? new GraphCache();
cache.holdfastGraphs = graphs;
