import { randomFillSync } from "node:crypto";

// Crockford base32, lowercase: ULIDs sort as strings in time order.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const TIME_LEN = 10;
const RANDOM_LEN = 16;

// Random bytes are drawn in blocks — one randomFillSync per 4 KiB rather than one per id or
// token — and each byte is handed out once.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/** Where `n` (≤ 4096) fresh random bytes start in `pool`. */
function takeRandom(n: number): number {
  if (poolOffset + n > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += n;
  return poolOffset - n;
}

let lastTime = -1;
let lastTimeText = "";
const lastRandom = new Uint8Array(RANDOM_LEN);

function encodeTime(ms: number): string {
  let out = "";
  let t = ms;
  for (let i = 0; i < TIME_LEN; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function freshRandom(): void {
  const at = takeRandom(RANDOM_LEN);
  for (let i = 0; i < RANDOM_LEN; i++) lastRandom[i] = (pool[at + i] as number) & 31;
}

/** Increments the random part so ids made in the same millisecond still sort in order. */
function increment(): void {
  for (let i = RANDOM_LEN - 1; i >= 0; i--) {
    if ((lastRandom[i] as number) < 31) {
      lastRandom[i] = (lastRandom[i] as number) + 1;
      return;
    }
    lastRandom[i] = 0;
  }
  freshRandom(); // 80 bits used up in one ms: practically unreachable
}

/** A monotonic ULID: 26 lowercase characters, time-sortable. */
export function ulid(now: number = Date.now()): string {
  if (now <= lastTime) {
    increment();
  } else {
    lastTime = now;
    lastTimeText = encodeTime(now);
    freshRandom();
  }
  let out = lastTimeText;
  for (let i = 0; i < RANDOM_LEN; i++) out += ALPHABET[lastRandom[i] as number];
  return out;
}

/** `bytes` random bytes from the CSPRNG as base64url (a lease token: 16 bytes, 22 characters). */
export function randomToken(bytes: number): string {
  if (bytes > pool.length) return randomFillSync(Buffer.alloc(bytes)).toString("base64url");
  const at = takeRandom(bytes);
  return pool.toString("base64url", at, at + bytes);
}

const ULID_RE = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/;

export function isUlid(value: string): boolean {
  return ULID_RE.test(value);
}

const GROUP_ID_RE = /^grp_[0-7][0-9a-hjkmnp-tv-z]{25}$/;

/** A group id's form (`grp_` + a ULID): looked up by id only, never as a name. */
export function isGroupId(value: string): boolean {
  return GROUP_ID_RE.test(value);
}

export type IdPrefix =
  | "grp"
  | "snap"
  | "job"
  | "mem"
  | "key"
  | "aud"
  | "req"
  | "ws"
  | "usr"
  | "conn"
  | "inv"
  | "arc"
  | "whk"
  | "whd"
  | "obx";

/** Prefixed, time-sortable ids for everything that is not a primitive: `snap_01h…`. */
export function prefixedId(prefix: IdPrefix, now?: number): string {
  return `${prefix}_${ulid(now)}`;
}
