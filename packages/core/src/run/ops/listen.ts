import type { ListenClient } from "@holdfast/db";
import type { Logger } from "../../base/log";
import { outboxListen } from "../../store/sql/outbox";
import type { OutageReporter } from "./outage";

/**
 * A LISTEN subscription that comes back by itself: a dedicated connection LISTENs on `channels`; when it is lost it
 * is opened again a second later (the outage watch says so once per outage; anything else is one warning). Every
 * (re)subscription calls `onListening`, since notifications sent while nobody listened are gone: the caller checks
 * for work it may have missed. Notifications only speed things up; the caller's polling or backstop stays.
 */
export function listenChannels(opts: {
  connect: () => ListenClient;
  channels: string[];
  /** `payload`: what the NOTIFY said ('' when nothing). */
  onNotify: (channel: string, payload: string) => void;
  onListening?: () => void;
  log: Logger;
  outages?: OutageReporter;
  retryMs?: number;
}): { close(): Promise<void> } {
  let current: ListenClient | undefined;
  let closing = false;
  let retry: NodeJS.Timeout | undefined;

  const open = async (): Promise<void> => {
    const client = opts.connect();
    const again = (error?: Error) => {
      if (closing || current !== client) return;
      current = undefined;
      if (!error || !opts.outages?.report(error)) opts.log.warn({ err: error, channels: opts.channels }, "LISTEN connection lost; listening again in a second");
      client.end().catch(() => {});
      retry = setTimeout(() => void open(), opts.retryMs ?? 1_000);
    };
    current = client;
    client.on("notification", (message) => opts.onNotify(message.channel, message.payload ?? ""));
    client.on("error", again);
    client.on("end", () => again());
    try {
      await client.connect();
      for (const channel of opts.channels) await outboxListen(client, channel);
      opts.onListening?.();
    } catch (error) {
      again(error as Error);
    }
  };
  void open();

  return {
    async close() {
      closing = true;
      if (retry) clearTimeout(retry);
      await current?.end().catch(() => {});
    },
  };
}
