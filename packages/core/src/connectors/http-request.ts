import { performHttpRequest } from "../effects/http-request";
import { type Connector, takenOver } from "./connector";

/** A plain HTTP call with `Idempotency-Key`; whether the target honours it is the node's `idempotent` setting. */
export const httpRequestConnector: Connector<"http_request"> = {
  kind: "http_request",
  connection: null,
  providerIdempotent: ({ node }) => node.config.idempotent,
  perform: async ({ node, step, signal }, key, begin) =>
    (await begin())
      ? performHttpRequest({ config: node.config, idempotencyKey: key, runId: step.runId, input: step.input, signal })
      : takenOver(key),
};
