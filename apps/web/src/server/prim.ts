/**
 * Prim's own server packages (@prim/db, @prim/wire/invoke, @prim/billing with the Stripe SDK, @prim/mail), loaded by Node at run time rather than
 * bundled: they are workspace links (outside node_modules, so `serverExternalPackages` does not
 * apply), read files beside their code (SQL migrations) and reach a native binding.
 */
export const primDb = (): Promise<typeof import("@prim/db")> =>
  import(/* turbopackIgnore: true */ /* webpackIgnore: true */ "@prim/db");
export const primInvoke = (): Promise<typeof import("@prim/wire/invoke")> =>
  import(/* turbopackIgnore: true */ /* webpackIgnore: true */ "@prim/wire/invoke");
export const primBilling = (): Promise<typeof import("@prim/billing")> =>
  import(/* turbopackIgnore: true */ /* webpackIgnore: true */ "@prim/billing");
export const primMail = (): Promise<typeof import("@prim/mail")> =>
  import(/* turbopackIgnore: true */ /* webpackIgnore: true */ "@prim/mail");
