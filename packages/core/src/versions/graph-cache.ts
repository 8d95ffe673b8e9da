import type { Tx } from "@holdfast/db";
import { versionsGraph } from "../sql/automations";
import { type Graph, parseGraph } from "./graph";

/** Published versions never change (a database trigger enforces it), so a parsed graph can be cached for good. */
export class GraphCache {
  private readonly graphs = new Map<string, Graph>();

  constructor(private readonly capacity = 1_000) {}

  async get(tx: Tx, orgId: string, versionId: string): Promise<Graph> {
    const cached = this.graphs.get(versionId);
    if (cached) return cached;
    const raw = await versionsGraph(tx, orgId, versionId);
    if (raw === undefined) throw new Error(`version ${versionId} not found`);
    return this.parsed(versionId, raw);
  }

  /** The graph of a version whose stored JSON the caller already read: parsed once per version. */
  parsed(versionId: string, raw: unknown): Graph {
    const cached = this.graphs.get(versionId);
    if (cached) return cached;
    const graph = parseGraph(raw);
    if (this.graphs.size >= this.capacity) this.graphs.delete(this.graphs.keys().next().value as string);
    this.graphs.set(versionId, graph);
    return graph;
  }
}
