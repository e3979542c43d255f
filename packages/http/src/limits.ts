/** Largest JSON request body (a 1 MiB kv value may grow to several MiB as base64 or escaped JSON). */
export const JSON_BODY_LIMIT = 16 * 1024 * 1024;
