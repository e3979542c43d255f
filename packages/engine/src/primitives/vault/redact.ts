/**
 * Finds a secret in what an upstream sent back and replaces it with `[REDACTED:NAME]`. It looks
 * for the value as is and in the forms an echo usually takes: JSON-escaped, URL-encoded
 * (`encodeURIComponent`, upper- or lower-case hex, and form encoding with `+`), hex, and base64
 * and base64url — whole, and embedded at any byte alignment inside a longer base64 text (such as
 * `Basic base64(user:secret)`). Redaction runs on bytes, before a binary body is base64-encoded.
 * It cannot catch a value the upstream transforms in other ways; the grant is what keeps a secret
 * away from hosts that would.
 */
export class Redactor {
  /** Byte patterns, longest first, so a longer form is replaced whole before a shorter one inside it. */
  private readonly needles: Buffer[];
  private readonly marker: Buffer;

  constructor(value: string, name: string) {
    this.marker = Buffer.from(`[REDACTED:${name}]`, "utf8");
    const raw = Buffer.from(value, "utf8");
    const forms = new Set<string>([value, ...jsonForms(value)]);
    const derived = new Set<string>();
    const uri = encodeURIComponent(value);
    derived.add(uri);
    derived.add(encodeURIComponent(uri));
    derived.add(uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
    derived.add(new URLSearchParams({ v: value }).toString().slice(2));
    derived.add(raw.toString("hex"));
    derived.add(raw.toString("hex").toUpperCase());
    derived.add(raw.toString("base64"));
    for (const alphabet of ["base64", "base64url"] as const) {
      for (let shift = 0; shift < 3; shift++) derived.add(base64Core(raw, shift, alphabet));
    }
    // Very short derived forms would match unrelated text everywhere; the raw forms always count.
    for (const form of derived) if (form.length >= 6) forms.add(form);
    forms.delete("");
    this.needles = [...forms].map((f) => Buffer.from(f, "utf8")).sort((a, b) => b.length - a.length);
  }

  bytes(input: Buffer): Buffer {
    let out = input;
    for (const needle of this.needles) out = replaceAll(out, needle, this.marker);
    return out;
  }

  /** Header text: Node decodes header bytes as latin1, so redact them as latin1 bytes. */
  header(text: string): string {
    return this.bytes(Buffer.from(text, "latin1")).toString("latin1");
  }

  /** Text that was never bytes (messages, URLs). */
  text(text: string): string {
    return this.bytes(Buffer.from(text, "utf8")).toString("utf8");
  }
}

/**
 * The value JSON-escaped once, twice and three times (JSON inside a JSON string, as an upstream
 * that echoes a JSON document in a JSON field writes it), each also as servers that escape
 * non-ASCII (`\uXXXX`) or `/` (`\/`) write it.
 */
function jsonForms(value: string): string[] {
  const out: string[] = [];
  let level = value;
  for (let depth = 0; depth < 3; depth++) {
    const next = JSON.stringify(level).slice(1, -1);
    if (next === level) break;
    const ascii = next.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    out.push(next, ascii, next.replaceAll("/", "\\/"), ascii.replaceAll("/", "\\/"));
    level = next;
  }
  return out;
}

/**
 * The base64 characters that depend on the secret's bytes alone when it starts `shift` bytes
 * into a 3-byte group: what any base64 text containing the secret at that alignment contains.
 */
function base64Core(raw: Buffer, shift: number, alphabet: "base64" | "base64url"): string {
  const encoded = Buffer.concat([Buffer.alloc(shift), raw]).toString(alphabet);
  const start = Math.ceil((8 * shift) / 6);
  const end = Math.floor((8 * (shift + raw.length)) / 6);
  return end > start ? encoded.slice(start, end) : "";
}

function replaceAll(haystack: Buffer, needle: Buffer, marker: Buffer): Buffer {
  let at = haystack.indexOf(needle);
  if (at === -1) return haystack;
  const parts: Buffer[] = [];
  let from = 0;
  while (at !== -1) {
    parts.push(haystack.subarray(from, at), marker);
    from = at + needle.length;
    at = haystack.indexOf(needle, from);
  }
  parts.push(haystack.subarray(from));
  return Buffer.concat(parts);
}
