import type { Tx } from "@holdfast/db";
import { versionsGraph } from "../store/sql/automations";
import { type Graph, parseGraph } from "./graph";

/** Published versions never change (a database trigger enforces it), so a parsed graph can be cached for good. */
export class GraphCache {
  private readonly graphs = new Map<string, Graph>();
  /** Reads under way: a burst of starts of a version this process has not parsed yet reads it once, not once each. */
  private readonly reading = new Map<string, Promise<Graph>>();

  constructor(private readonly capacity = 1_000) {}

  async get(tx: Tx, orgId: string, versionId: string): Promise<Graph> {
    const cached = this.graphs.get(versionId);
    if (cached) return cached;
    // (A read that failed in its caller's transaction is made again in this one.)
    const under = this.reading.get(versionId);
    if (under) return under.catch(() => this.get(tx, orgId, versionId));
    const read = (async () => {
      const raw = await versionsGraph(tx, orgId, versionId);
      if (raw === undefined) throw new Error(`version ${versionId} not found`);
      return this.parsed(versionId, raw);
    })().finally(() => this.reading.delete(versionId));
    this.reading.set(versionId, read);
    return read;
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
