export { type ApiApp, type ApiAppOptions, createApiApp } from "./app.js";
export { type ApiEnv, readApiEnv } from "./env.js";
export { limitKeys, RedisLimiter, type RedisLimiterOptions } from "./limits/limiter.js";
export { Metering } from "./limits/metering.js";
export { main, startApi } from "./start.js";
