import { BUCKET_REFILL, SCRIPT_NOW } from "./script.js";

/**
 * A lease of tokens from a credential's bucket (CLOUD.md, "Limits and metering"): one script
 * takes up to N tokens at once for this process to spend without Redis (leases.ts). The bucket
 * is the per-call script's (script.ts): same key, same "<tokens> <ms>" value, same refill, so
 * both paths take from one bucket. Time is Redis's (`TIME`) unless a test passes its own.
 *
 * KEYS: 1 bucket (`prim:{ws}:rl:<who>`), 2 plan hash (`prim:{ws}:plan`: plan, rps, burst)
 * ARGV: 1 now ms ("" = Redis TIME), 2 tokens wanted (>= 1)
 * Answers { status, a, b, c, d, plan }:
 *   0 leased: a = tokens left in Redis (floor), b = burst, c = rate per s, d = tokens granted
 *     (1..wanted: fewer when the bucket holds fewer), plan = the plan's name
 *   1 rate_limited: a = Retry-After s (>= 1), b = burst, c = rate, d = 0, plan
 *   4 the plan is not in Redis: the caller loads it and calls again
 */
export const LEASE_SCRIPT = `
local plan = redis.call('HMGET', KEYS[2], 'plan', 'rps', 'burst')
if not plan[1] then return {4, 0, 0, 0, 0, ''} end
${SCRIPT_NOW}local rate = tonumber(plan[2]) or 20
local burst = tonumber(plan[3]) or 60
${BUCKET_REFILL}if tokens < 1 then
  return {1, math.max(1, math.ceil((1 - tokens) / rate)), burst, rate, 0, plan[1]}
end
local granted = math.min(tonumber(ARGV[2]), math.floor(tokens))
redis.call('SET', KEYS[1], (tokens - granted) .. ' ' .. math.max(now, ts), 'PX', math.ceil(burst / rate * 1000) + 1000)
return {0, math.floor(tokens - granted), burst, rate, granted, plan[1]}
`;
