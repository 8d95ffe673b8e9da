/**
 * The providers layer: the egress guard, connections and the effects (outside calls under the effect
 * ledger). It imports the base, store and versions layers.
 *
 * `@holdfast/core/providers`: what the apps, the CLI and the tests use of it.
 */
export { ConnectionExistsError, createConnection, reconnectConnection } from "./connections/connect";
export { connectionLimits, type ConnectionLimits, limitsOf } from "./connections/limits";
export { addConnection, type ChangeResult, type ConnectionChange, ConnectionConfigError, ConnectionInUseError, ConnectionNotFoundError, deleteConnection, listConnections, type ListedConnection, updateConnection, validConnectionConfig } from "./connections/manage";
export { type NoticeSendResult, noticeText, sendConnectionNoticesOnce, type SystemMail, systemMailEnv, systemMailFrom } from "./connections/notices";
export { probeConnection, type ProbeResult, probeStaleConnections } from "./connections/probe";
export { decryptSecret, encryptSecret } from "./connections/secrets";
export { slackClient } from "./connections/slack-client";
export { type ConnectionTestResult, testConnectionSettings, testSavedConnection } from "./connections/test";
export { type ConnectionUse, deleteRefusal, draftsNote, liveUses, renameRefusal, useWords } from "./connections/uses";
export { performHttpRequest } from "./effects/http-request";
export { effectKey } from "./effects/keys";
export { messageIdFor, performSendEmail } from "./effects/send-email";
export { type AddressVerdict, classifyAddress } from "./net/address";
export { checkAddress, defaultEgressAllow, type Destination, type EgressOptions, egressRefusalOf, EgressRefusedError, egressStepError, literalHostRefusal, literalUrlRefusal, type LookupAll, normalizeHost, resolveEgress } from "./net/egress";
export { egressDispatcher, egressFetch, guardedFetch, type GuardedFetch } from "./net/fetch";
export { egressSmtpTransport } from "./net/smtp";
