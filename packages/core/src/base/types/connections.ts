/** connections.kind (CHECK connections_kind_check); each kind's module is versions/connection-kinds/<kind>.ts. */
export type ConnectionKindName = "smtp" | "crm" | "model" | "slack" | "http";
