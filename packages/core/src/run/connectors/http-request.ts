import { httpConnectionConfig, underBaseUrl } from "../../versions/connection-kinds/http";
import { performHttpRequest } from "../../providers/effects/http-request";
import type { StepOutcome } from "../../base/outcome/outcome";
import { type Connector, takenOver } from "./connector";

/**
 * A plain HTTP call with `Idempotency-Key`; whether the target honours it is the node's `idempotent` setting. With
 * `connection` (an HTTP API connection) the connection's header carries its secret, replacing a plain header of the
 * same name; a connection with a base URL sends its credential only to addresses under it.
 */
export const httpRequestConnector: Connector<"http_request"> = {
  kind: "http_request",
  connection: { kind: "http", name: (node) => (node.config as { connection?: string }).connection ?? null },
  providerIdempotent: ({ node }) => node.config.idempotent,
  async perform({ node, step, signal, connection, simulation }, key, begin): Promise<StepOutcome> {
    let credential: { header: string; value: string } | undefined;
    if (connection) {
      const http = httpConnectionConfig.safeParse(connection.config);
      if (!http.success || connection.password === null) {
        const message = `connection "${connection.name}" is not a complete HTTP API connection: open it in Settings -> Connections`;
        return { kind: "fail", error: { code: "bad_connection", message, permanent: true, notPerformed: true } };
      }
      if (!underBaseUrl(node.config.url, http.data.baseUrl)) {
        const message = `connection "${connection.name}" only sends its credential to addresses under ${http.data.baseUrl}, not to ${node.config.url}`;
        return { kind: "fail", error: { code: "credential_not_for_url", message, permanent: true, notPerformed: true } };
      }
      credential = { header: http.data.header, value: connection.password };
    }
    if (!(await begin())) return takenOver(key);
    return performHttpRequest({
      config: node.config,
      idempotencyKey: key,
      runId: step.runId,
      input: step.input,
      signal,
      ...(credential ? { credential } : {}),
      // A test run: recorded and answered as the tester chose, no connection made (simulate.ts).
      ...(simulation ? { simulated: simulation.call(node.id) } : {}),
    });
  },
};
