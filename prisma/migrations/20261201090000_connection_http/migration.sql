-- HTTP API connections (connections/kinds/http.ts): a credential header for http_request steps, so a token is never
-- written into a graph. config: { header, baseUrl? }; the header's value is the encrypted secret.
ALTER TABLE "connections" DROP CONSTRAINT "connections_kind_check";
ALTER TABLE "connections" ADD CONSTRAINT "connections_kind_check" CHECK (kind IN ('smtp', 'crm', 'model', 'slack', 'http'));
