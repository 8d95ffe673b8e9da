/** `true` only when A and B are the same type: `const check: Same<A, B> = true` fails to compile when they drift. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
