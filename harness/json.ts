/** A JSON value: what configs, metadata, fingerprints and cache keys are made of. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [k: string]: JsonValue };
