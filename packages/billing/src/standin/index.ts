export { type StripeStandIn, type StripeStandInOptions, startStripeStandIn } from "./server.js";
