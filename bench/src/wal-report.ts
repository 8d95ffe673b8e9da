import type { WalGroup } from "./measure/wal-detail";
import { fmt } from "./report";
import type { RaceResult } from "./result";

/** Lines a grouping (BENCH_WAL_TOP, a whole number; 10 otherwise). */
const top = /^[1-9]\d*$/.test(process.env.BENCH_WAL_TOP ?? "") ? Number(process.env.BENCH_WAL_TOP) : 10;

function groupLines(title: string, groups: WalGroup[], steps: number): string[] {
  const shown = groups.slice(0, top);
  const rest = groups.slice(top);
  const line = (g: WalGroup) =>
    `      ${g.name.padEnd(44)} ${fmt(g.bytes / steps).padStart(6)} B  (FPI ${fmt(g.fpiBytes / steps).padStart(5)} B, ${fmt(g.records / steps, 2).padStart(5)} records)`;
  const lines = [`    ${title}:`, ...shown.map(line)];
  if (rest.length) {
    const sum = (k: "bytes" | "fpiBytes" | "records") => rest.reduce((a, g) => a + g[k], 0);
    lines.push(line({ name: `(${rest.length} more)`, bytes: sum("bytes"), fpiBytes: sum("fpiBytes"), records: sum("records") }));
  }
  return lines;
}

/**
 * "WAL a step by relation": a row's WAL (the records the WAL B/st column counts) per completed step, by relation and by
 * record type, the full-page images apart (their bytes are inside each figure, and also said alone).
 */
export function walByRelationLines(rows: RaceResult[]): string[] {
  const lines: string[] = [];
  for (const r of rows) {
    const d = r.measured.walDetail;
    if (!d) continue;
    const steps = Math.max(1, r.steps);
    const bytes = d.byRelation.reduce((a, g) => a + g.bytes, 0);
    const fpi = d.byRelation.reduce((a, g) => a + g.fpiBytes, 0);
    lines.push(
      `WAL a step by relation, ${r.label}: ${fmt(bytes / steps)} B a step, ` +
        `of which full-page images ${fmt(fpi / steps)} B (${fmt((100 * fpi) / Math.max(1, bytes), 1)}%), without them ${fmt((bytes - fpi) / steps)} B`,
    );
    lines.push(...groupLines("by relation (a record goes to its first block's)", d.byRelation, steps));
    lines.push(...groupLines("by record type", d.byRecord, steps));
    if (d.byRelationRecord) lines.push(...groupLines("by relation and record type", d.byRelationRecord, steps));
  }
  return lines;
}
