export * from "./database";
export * from "./factories";
export * from "./http-target";
export * from "./procs";
export * from "./redis";
export * from "./smtp";
export * from "./crm";
export * from "./model";
