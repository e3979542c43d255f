import { randomBytes } from "node:crypto";

// Crockford base32, lowercase: ULIDs sort as strings in time order.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const TIME_LEN = 10;
const RANDOM_LEN = 16;

let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = "";
  let t = ms;
  for (let i = 0; i < TIME_LEN; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function freshRandom(): number[] {
  const bytes = randomBytes(RANDOM_LEN);
  return Array.from(bytes, (b) => b % 32);
}

/** Increments the random part so ids made in the same millisecond still sort in order. */
function increment(digits: number[]): number[] {
  const next = digits.slice();
  for (let i = next.length - 1; i >= 0; i--) {
    if ((next[i] as number) < 31) {
      next[i] = (next[i] as number) + 1;
      return next;
    }
    next[i] = 0;
  }
  return freshRandom(); // overflow of 80 bits in one ms: practically unreachable
}

/** A monotonic ULID: 26 lowercase characters, time-sortable. */
export function ulid(now: number = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = increment(lastRandom);
  } else {
    lastTime = now;
    lastRandom = freshRandom();
  }
  return encodeTime(Math.max(now, lastTime)) + lastRandom.map((d) => ALPHABET[d]).join("");
}

const ULID_RE = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/;

export function isUlid(value: string): boolean {
  return ULID_RE.test(value);
}

export type IdPrefix = "grp" | "snap" | "job" | "mem" | "key" | "aud" | "req";

/** Prefixed, time-sortable ids for everything that is not a primitive: `snap_01h…`. */
export function prefixedId(prefix: IdPrefix, now?: number): string {
  return `${prefix}_${ulid(now)}`;
}
