import type Stripe from "stripe";
import type { CheckoutRecord, Store } from "./resources.js";

const esc = (s: unknown) =>
  String(s ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;color:#18181b}button{font-size:1rem;padding:.5rem 1rem;background:#18181b;color:#fff;border:0;border-radius:.25rem}li{margin:.25rem 0}</style>
</head><body><main>${body}<p><small>Stripe stand-in (test mode)</small></p></main></body></html>`;
}

const money = (p: Stripe.Price) =>
  p.recurring?.usage_type === "metered"
    ? `${esc(p.unit_amount_decimal)}¢ per unit used`
    : `$${((p.unit_amount ?? 0) / 100).toFixed(2)} per ${esc(p.recurring?.interval ?? "once")}`;

/** The hosted Checkout page: what is bought, "Pay and subscribe", "Cancel". */
export function checkoutPage(store: Store, { session, items }: CheckoutRecord): string {
  const prices = items.map((li) => store.get(store.prices, "price", li.price));
  const name = store.products.get(prices[0]?.product ?? "")?.name ?? "your plan";
  const list = prices.map((p) => `<li>${esc(p.nickname ?? p.id)}: ${money(p)}</li>`).join("");
  const action =
    session.status === "open"
      ? `<form method="post" action="/checkout/${esc(session.id)}/pay"><button type="submit">Pay and subscribe</button></form>`
      : "<p>This session is complete.</p>";
  return page(
    "Checkout",
    `<h1>Subscribe to ${esc(name)}</h1><ul>${list}</ul>${action}<p><a href="${esc(session.cancel_url)}">Cancel</a></p>`,
  );
}

/** The Customer Portal: the customer's subscriptions with "Cancel plan", and "Return". */
export function portalPage(store: Store, portal: Stripe.BillingPortal.Session): string {
  const subs = [...store.subscriptions.values()].filter((s) => s.customer === portal.customer);
  const rows = subs
    .map((s) => {
      const cancel =
        s.status !== "canceled" && !s.cancel_at_period_end
          ? `<form method="post" action="/portal/${esc(portal.id)}/cancel"><input type="hidden" name="subscription" value="${esc(s.id)}"><button type="submit">Cancel plan</button></form>`
          : "";
      return `<li>${esc(s.id)}: ${esc(s.status)}${s.cancel_at_period_end ? " (cancels at period end)" : ""}${cancel}</li>`;
    })
    .join("");
  return page(
    "Billing portal",
    `<h1>Your subscriptions</h1><ul>${rows || "<li>None</li>"}</ul><p><a href="${esc(portal.return_url)}">Return</a></p>`,
  );
}

export function invoicePage(invoice: Stripe.Invoice): string {
  return page(
    "Invoice",
    `<h1>Invoice ${esc(invoice.number)}</h1><p>${esc(invoice.status)}: $${(invoice.total / 100).toFixed(2)}</p>`,
  );
}
