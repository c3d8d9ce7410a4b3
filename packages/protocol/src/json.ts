/** JSON values as the protocol carries them (payloads, results, checkpoints, metadata). */

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object. */
export type JsonObject = { [key: string]: Json };
