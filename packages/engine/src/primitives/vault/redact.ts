import { domainToASCII } from "node:url";

/**
 * Finds a secret in what an upstream sent back and replaces it with `[REDACTED:NAME]`. It looks
 * for the value as is and in the forms an echo usually takes: JSON-escaped, URL-encoded
 * (`encodeURIComponent`, and form encoding with `+`), hex, and base64
 * and base64url — whole, and embedded at any byte alignment inside a longer base64 text (such as
 * `Basic base64(user:secret)`) — and as a host name (IDNA/punycode). Matching ignores case: an
 * upstream that echoes the value in a host name (a redirect to `http://<value>.invalid/`), a
 * header name or an upper-cased hex dump changes its case (ASCII letters; a Unicode case change is not caught), and over-redacting a look-alike costs
 * nothing. Redaction runs on bytes, before a binary body is base64-encoded.
 * It cannot catch a value the upstream transforms in other ways; the grant is what keeps a secret
 * away from hosts that would.
 */
export class Redactor {
  /** Byte patterns, longest first, so a longer form is replaced whole before a shorter one inside it. */
  private readonly needles: Buffer[];
  private readonly marker: Buffer;

  constructor(value: string, name: string) {
    this.marker = Buffer.from(`[REDACTED:${name}]`, "utf8");
    const forms = new Set<string>([value, ...jsonForms(value)]);
    const derived = new Set<string>();
    const host = domainToASCII(value);
    if (host !== "") derived.add(host);
    // Encodings of the value as sent and of its lower- and upper-cased forms: an upstream that
    // changes the case first (a host name, a case-insensitive key) and encodes after.
    for (const cased of new Set([value, value.toLowerCase(), value.toUpperCase()])) {
      const bytes = Buffer.from(cased, "utf8");
      const uri = encodeURIComponent(cased);
      derived.add(uri);
      derived.add(encodeURIComponent(uri));
      derived.add(new URLSearchParams({ v: cased }).toString().slice(2));
      derived.add(bytes.toString("hex"));
      derived.add(bytes.toString("base64"));
      for (const alphabet of ["base64", "base64url"] as const) {
        for (let shift = 0; shift < 3; shift++) derived.add(base64Core(bytes, shift, alphabet));
      }
    }
    // Very short derived forms would match unrelated text everywhere; the raw forms always count.
    for (const form of derived) if (form.length >= 6) forms.add(form);
    forms.delete("");
    this.needles = [...forms].map((f) => foldCase(Buffer.from(f, "utf8"))).sort((a, b) => b.length - a.length);
  }

  bytes(input: Buffer): Buffer {
    let out = input;
    let folded = foldCase(input);
    for (const needle of this.needles) [out, folded] = replaceAll(out, folded, needle, this.marker);
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

/**
 * The bytes with letters lower-cased, same length, so an offset in the folded copy is the same
 * offset in the original. Read as latin1, every byte is one character whose lower case is one
 * latin1 character too; that folds ASCII letters (and, harmlessly, a few UTF-8 lead bytes the
 * same way in needle and haystack). Native code does it, not a loop over a 10 MiB body.
 */
function foldCase(bytes: Buffer): Buffer {
  return Buffer.from(bytes.toString("latin1").toLowerCase(), "latin1");
}

/** Replaces every case-insensitive occurrence of `needle` (found in `folded`) in `haystack`. */
function replaceAll(haystack: Buffer, folded: Buffer, needle: Buffer, marker: Buffer): [Buffer, Buffer] {
  let at = folded.indexOf(needle);
  if (at === -1) return [haystack, folded];
  const parts: Buffer[] = [];
  const foldedParts: Buffer[] = [];
  const foldedMarker = foldCase(marker);
  let from = 0;
  while (at !== -1) {
    parts.push(haystack.subarray(from, at), marker);
    foldedParts.push(folded.subarray(from, at), foldedMarker);
    from = at + needle.length;
    at = folded.indexOf(needle, from);
  }
  parts.push(haystack.subarray(from));
  foldedParts.push(folded.subarray(from));
  return [Buffer.concat(parts), Buffer.concat(foldedParts)];
}
