/**
 * The one round trip of a limited call (CLOUD.md, "Limits and metering"): a Lua script run by
 * SHA that decides the credential's token bucket, the workspace's UTC-month operation counter
 * and the plan caps, checking every limit before it takes from any (a call refused by one
 * limit consumes nothing). Time is Redis's (`TIME`) unless a test passes its own (ARGV[1]).
 *
 * Keys share the workspace's hash tag `{ws}`: the month and day counters are named inside the
 * script from Redis's clock, so they are not declared keys; with one tag per workspace they
 * still live in one cluster slot.
 *
 * KEYS: 1 bucket (`prim:{ws}:rl:<who>`: "<tokens> <ms>"), 2 plan hash (`prim:{ws}:plan`: plan, rps, burst),
 *       3 storage gauge (`prim:{ws}:storage`, bytes)
 * ARGV: 1 now ms ("" = Redis TIME), 2 counter prefix (`prim:{ws}:ops:`), 3 operations the call
 *       counts (0 = not metered; a batch counts each entry),
 *       4 storage write 0/1, 5 Starter feature 0/1,
 *       6 the key's budget counter (`prim:{ws}:budget:<who>`, "" = no budget; the period is
 *       appended here from the script's clock; `…:carved` beside it holds what the key's
 *       children took off its limit), 7 the budget's limit, 8 its period: total|day|month
 * Answers { status, a, b, c, d, e }:
 *   0 admitted: a = tokens left (floor), b = burst, c = rate per s, d = operations this month,
 *     e = the key's budget used in its period, this call included (-1: no budget or not metered)
 *   1 rate_limited: a = Retry-After s (>= 1), b = burst, c = rate
 *   2 plan_limit (429): a = 1 operations, 2 storage
 *   3 plan_limit (403): a = 1 Starter feature
 *   5 the key's budget is spent: a = seconds until it refills (0: a total, never), b = the limit
 *     less what its children hold,
 *     c = used, d = 1 the first refusal of this period (the caller audits it), else 0
 * The count caps (primitives, groups) are not here: the catalog takes them in the create's own
 * Postgres transaction (@prim/db, plan-caps.ts), where concurrent creates cannot both pass.
 *   4 the plan is not in Redis: the caller loads it and calls again
 */
/** `now`: ARGV[1] when a test passes its own time, else Redis's TIME (ms). Shared with the lease script. */
export const SCRIPT_NOW = `
local now
if ARGV[1] ~= '' then now = tonumber(ARGV[1]) else
  local t = redis.call('TIME'); now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * The bucket in KEYS[1] ("<tokens> <ms>") read and refilled at `rate` per second up to `burst`
 * (both set before), as `tokens` and `ts`. Shared with the lease script (lease-script.ts).
 */
export const BUCKET_REFILL = `
local tokens, ts = burst, now
local b = redis.call('GET', KEYS[1])
if b then
  local sp = string.find(b, ' ', 1, true)
  tokens = tonumber(string.sub(b, 1, sp - 1)); ts = tonumber(string.sub(b, sp + 1))
end
if now > ts then tokens = math.min(burst, tokens + (now - ts) * rate / 1000) end
`;

export const LIMIT_SCRIPT = `
local plan = redis.call('HMGET', KEYS[2], 'plan', 'rps', 'burst')
if not plan[1] then return {4, 0, 0, 0} end
${SCRIPT_NOW}local function civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * ((m + 9) % 12) + 2) / 5) + d - 1
  return era * 146097 + yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy - 719468
end
local function ymd(ms)
  local z = math.floor(ms / 86400000) + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y, m, d
end
local y, m, d = ymd(now)
local monthKey = ARGV[2] .. string.format('%04d%02d', y, m)
local dayKey = ARGV[2] .. string.format('%04d%02d%02d', y, m, d)
local starter = plan[1] == 'starter'
local units = tonumber(ARGV[3])
local rate = tonumber(plan[2]) or 20
local burst = tonumber(plan[3]) or 60

-- The bucket ("<tokens> <ms>"): refilled at rate per second up to burst.
${BUCKET_REFILL}if tokens < 1 then
  return {1, math.max(1, math.ceil((1 - tokens) / rate)), burst, rate}
end

-- The plan's caps (Starter only; Pro and Enterprise are never cut off).
if starter then
  if ARGV[5] == '1' then return {3, 1, 0, 0} end
  if units > 0 and (tonumber(redis.call('GET', monthKey)) or 0) + units > 1000000 then return {2, 1, 0, 0} end
  if ARGV[4] == '1' and (tonumber(redis.call('GET', KEYS[3])) or 0) >= 5368709120 then return {2, 2, 0, 0} end
end

-- The key's budget: metered operations only, in its period (UTC day or month) or in total.
local budgetKey, per = nil, ARGV[8]
if ARGV[6] ~= '' and units > 0 then
  budgetKey = ARGV[6]
  if per == 'day' then budgetKey = budgetKey .. ':' .. string.format('%04d%02d%02d', y, m, d)
  elseif per == 'month' then budgetKey = budgetKey .. ':' .. string.format('%04d%02d', y, m) end
  -- What its children hold (@prim/db key-budgets.ts) is off its limit in every period.
  local limit = tonumber(ARGV[7]) - (tonumber(redis.call('GET', ARGV[6] .. ':carved')) or 0)
  local used = tonumber(redis.call('GET', budgetKey)) or 0
  if used + units > limit then
    local refill = 0
    if per == 'day' then refill = (math.floor(now / 86400000) + 1) * 86400000
    elseif per == 'month' then
      if m == 12 then refill = civil(y + 1, 1, 1) * 86400000 else refill = civil(y, m + 1, 1) * 86400000 end
    end
    local retry = 0
    if refill > 0 then retry = math.max(1, math.ceil((refill - now) / 1000)) end
    -- Told once per period: the first refusal is audited (key.budget_exhausted).
    local first = redis.call('SET', budgetKey .. ':spent', '1', 'NX', 'PX', refill > 0 and (refill - now + 86400000) or 400 * 86400000)
    return {5, retry, limit, used, first and 1 or 0}
  end
end

-- Admitted: only now take the token and count the operation.
-- Expires once it would be full again anyway.
redis.call('SET', KEYS[1], (tokens - 1) .. ' ' .. math.max(now, ts), 'PX', math.ceil(burst / rate * 1000) + 1000)
local ops = -1
if units > 0 then
  ops = redis.call('INCRBY', monthKey, units)
  if ops == units then redis.call('EXPIRE', monthKey, 40 * 86400) end
  if redis.call('INCRBY', dayKey, units) == units then redis.call('EXPIRE', dayKey, 3 * 86400) end
end
local spent = -1
if budgetKey then
  spent = redis.call('INCRBY', budgetKey, units)
  -- A period's counter outlives its period a little; a total's never expires.
  if spent == units and per == 'day' then redis.call('EXPIRE', budgetKey, 3 * 86400) end
  if spent == units and per == 'month' then redis.call('EXPIRE', budgetKey, 40 * 86400) end
end
return {0, math.floor(tokens - 1), burst, rate, ops, spent}
`;
