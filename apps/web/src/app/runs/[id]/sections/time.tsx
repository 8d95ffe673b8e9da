/** A time in the viewer's zone, short (the Details tables); the exact instant is the tooltip. */
export function timeIn(zone: string) {
  const format = new Intl.DateTimeFormat("en-GB", { timeZone: zone, weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
  return (at: Date | null | undefined) => {
    if (!at) return <span className="muted">-</span>;
    return (
      <time dateTime={at.toISOString()} title={at.toISOString()}>
        {format.format(at)}
      </time>
    );
  };
}

/** Renders one instant (or a dash when there is none) in the viewer's zone. */
export type When = ReturnType<typeof timeIn>;
