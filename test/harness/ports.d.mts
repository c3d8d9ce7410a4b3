/** A free TCP port on 127.0.0.1 (so a restarted server can come back on the same address). */
export function freePort(): Promise<number>;
