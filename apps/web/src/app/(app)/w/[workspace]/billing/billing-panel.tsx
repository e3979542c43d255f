"use client";
import { useMutation, useQuery } from "@tanstack/react-query";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";

const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;
const millions = (n: number) =>
  n < 1_000_000 ? n.toLocaleString("en") : `${(n / 1_000_000).toLocaleString("en", { maximumFractionDigits: 2 })}M`;
const gb = (bytes: number) => `${(bytes / 1024 ** 3).toLocaleString("en", { maximumFractionDigits: 2 })} GB`;
const date = (iso: string) => iso.slice(0, 10);

/** The plan, usage against Pro's included amounts, projected overage, upgrade / manage, invoices. */
export function BillingPanel({
  workspace,
  checkout,
  plans,
}: {
  workspace: string;
  checkout?: string;
  /** What each plan includes (@prim/billing's `PLAN_FEATURES`). */
  plans: Record<"starter" | "pro" | "enterprise", readonly string[]>;
}) {
  const trpc = useTRPC();
  // Back from checkout, the webhook may land a moment after the browser: look again until Pro shows.
  const summary = useQuery({
    ...trpc.billing.summary.queryOptions({ workspace }),
    refetchInterval: (query) =>
      checkout === "success" && query.state.data?.workspace.plan === "starter" ? 2_000 : false,
  });
  const go = (answer: { url: string }) => window.location.assign(answer.url);
  const upgrade = useMutation(trpc.billing.checkout.mutationOptions({ onSuccess: go }));
  const manage = useMutation(trpc.billing.portal.mutationOptions({ onSuccess: go }));
  if (summary.isPending) return <p className="text-sm text-zinc-600">Loading billing…</p>;
  if (summary.isError) return <ErrorText error={summary.error} prefix="Could not load billing: " />;
  const s = summary.data;
  const sub = s.subscription;
  return (
    <div className="space-y-6 text-sm">
      {checkout === "success" && (
        <p role="status" className="rounded border border-green-700 bg-green-50 p-2">
          {s.workspace.plan === "starter"
            ? "Thank you: Stripe is confirming the payment; Pro shows here within seconds."
            : "Thank you: the workspace is on Pro."}
        </p>
      )}
      {checkout === "cancel" && <p role="status">Checkout was cancelled; nothing changed.</p>}
      {sub?.status === "past_due" && (
        <p role="alert" className="rounded border border-amber-700 bg-amber-50 p-2">
          A payment failed. Pro stays on until{" "}
          {sub.grace_until === null ? "Stripe's retries end" : date(sub.grace_until)}; update the payment method in the
          billing portal, or the workspace returns to Starter's limits then (its data is kept).
        </p>
      )}
      <section aria-labelledby="plan-title" className="rounded-lg border bg-white p-4">
        <h2 id="plan-title" className="text-lg font-semibold">
          {s.workspace.name}: {s.workspace.plan} plan
        </h2>
        {sub !== null && (
          <p className="text-zinc-700">
            Subscription {sub.status}
            {sub.current_period_end !== null &&
              (sub.cancel_at_period_end
                ? ` · ends on ${date(sub.current_period_end)}, then Starter`
                : ` · renews on ${date(sub.current_period_end)}`)}
          </p>
        )}
        {!s.enabled && <p className="text-zinc-700">Billing is not configured on this server.</p>}
        <div className="mt-3 flex flex-wrap gap-2">
          {s.enabled && s.workspace.plan === "starter" && (
            <button
              type="button"
              className="rounded bg-zinc-900 px-3 py-1 text-white disabled:opacity-50"
              disabled={upgrade.isPending}
              onClick={() => upgrade.mutate({ workspace })}
            >
              Upgrade to Pro
            </button>
          )}
          {s.enabled && sub !== null && (
            <button
              type="button"
              className="rounded border px-3 py-1 disabled:opacity-50"
              disabled={manage.isPending}
              onClick={() => manage.mutate({ workspace })}
            >
              Manage billing
            </button>
          )}
        </div>
        <ErrorText error={upgrade.error ?? manage.error} />
        {s.workspace.plan === "enterprise" && <p className="mt-2">Enterprise terms are set with Prim directly.</p>}
      </section>
      {s.included !== null && (
        <section aria-labelledby="usage-title" className="rounded-lg border bg-white p-4">
          <h2 id="usage-title" className="text-lg font-semibold">
            This month
          </h2>
          <dl className="mt-2 grid grid-cols-1 gap-2 sm:grid-cols-3">
            <div>
              <dt className="text-zinc-600">Operations</dt>
              <dd>
                {millions(s.usage.operations)} of {millions(s.included.operations)} included
              </dd>
            </div>
            <div>
              <dt className="text-zinc-600">Storage</dt>
              <dd>
                {gb(s.usage.storage_bytes)} of {gb(s.included.storage_bytes)} included
              </dd>
            </div>
            {s.projection !== null && (
              <div>
                <dt className="text-zinc-600">Projected overage</dt>
                <dd data-testid="projected-overage">{dollars(s.projection.totalCents)}</dd>
              </div>
            )}
          </dl>
          <p className="mt-2 text-zinc-600">
            Pro: $0.50 per million operations past 25M, $0.25 per GB-month past 50 GB; billed from each completed day's
            usage. Starter stops at its caps instead.
          </p>
        </section>
      )}
      <section aria-labelledby="plans-title" className="rounded-lg border bg-white p-4">
        <h2 id="plans-title" className="text-lg font-semibold">
          What each plan includes
        </h2>
        <div className="mt-2 grid grid-cols-1 gap-4 sm:grid-cols-3">
          {(["starter", "pro", "enterprise"] as const).map((plan) => (
            <div key={plan} data-testid={`plan-${plan}`}>
              <h3 className="font-medium">
                <span className="capitalize">{plan}</span>
                {s.workspace.plan === plan && <span className="text-zinc-600"> (this workspace)</span>}
              </h3>
              <ul className="mt-1 list-disc space-y-1 pl-5 text-zinc-700">
                {plans[plan].map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
            </div>
          ))}
        </div>
      </section>
      <section aria-labelledby="invoices-title" className="rounded-lg border bg-white p-4">
        <h2 id="invoices-title" className="text-lg font-semibold">
          Invoices
        </h2>
        {s.invoices.length === 0 ? (
          <p className="text-zinc-600">No invoices yet.</p>
        ) : (
          <ul>
            {s.invoices.map((i) => (
              <li key={i.id} className="flex flex-wrap justify-between gap-2 border-b py-1 last:border-0">
                <span>
                  {new Date(i.created * 1000).toISOString().slice(0, 10)} · {i.number ?? i.id}
                </span>
                <span>
                  {dollars(i.amount_due)} {i.status}
                  {i.url !== null && (
                    <>
                      {" · "}
                      <a className="underline" href={i.url}>
                        View
                      </a>
                    </>
                  )}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
