/** Plain-words helpers shared by the kinds' summaries and the forms. Pure. */

const units: [number, string][] = [
  [86_400, "day"],
  [3_600, "hour"],
  [60, "minute"],
  [1, "second"],
];

/** 93600 -> "1 day 2 hours"; 0 -> "0 seconds". At most two units, the rest rounded away. */
export function durationWords(seconds: number): string {
  if (seconds <= 0) return "0 seconds";
  const parts: string[] = [];
  let left = seconds;
  for (const [size, name] of units) {
    const n = Math.floor(left / size);
    if (n > 0 && parts.length < 2) {
      parts.push(`${n} ${name}${n === 1 ? "" : "s"}`);
      left -= n * size;
    }
  }
  return parts.join(" ");
}

export const weekdayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/** ["a", "b", "c"] -> "a, b or c". */
export function listWords(items: string[], last = "or"): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} ${last} ${items.at(-1)}`;
}
