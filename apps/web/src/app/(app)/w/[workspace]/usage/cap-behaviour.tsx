import Link from "next/link";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { formatBytes, formatNumber } from "@/lib/format";

/** What happens at a cap (spec: Plans, Enforcement), for the workspace's plan. */
export function CapBehaviour(props: {
  workspace: string;
  plan: string;
  caps: { operations: number; storageBytes: number; primitives: number } | null;
  included: { operations: number; storageBytes: number } | null;
}) {
  const { caps, included } = props;
  return (
    <Card role="group" aria-labelledby="caps-title">
      <CardHeader>
        <CardTitle id="caps-title">What happens at a cap</CardTitle>
        <CardDescription>
          {caps !== null
            ? "Starter's caps are hard: calls past them are refused, never billed."
            : "This plan is never cut off."}
        </CardDescription>
      </CardHeader>
      <CardContent className="text-sm">
        {caps !== null ? (
          <>
            <ul className="list-disc space-y-1.5 pl-5">
              <li>
                After {formatNumber(caps.operations)} operations in a month, further calls answer{" "}
                <code className="font-mono text-xs">429 plan_limit</code> until the 1st (UTC).
              </li>
              <li>
                At {formatBytes(caps.storageBytes)} of storage, writes answer{" "}
                <code className="font-mono text-xs">429 plan_limit</code>; reads and deletes keep working.
              </li>
              <li>
                With {formatNumber(caps.primitives)} primitives, creating another answers{" "}
                <code className="font-mono text-xs">429 plan_limit</code>.
              </li>
              <li>
                A second group, snapshots, restore, fork, the audit log and webhooks need Pro (
                <code className="font-mono text-xs">403 plan_limit</code>); Starter has the change feeds.
              </li>
            </ul>
            <p className="mt-3">
              <Link href={`/w/${props.workspace}/billing`} className="font-medium underline underline-offset-4">
                Upgrade to Pro
              </Link>{" "}
              to lift them (owners and billing admins).
            </p>
          </>
        ) : included !== null ? (
          <p>
            Pro includes {formatNumber(included.operations)} operations and {formatBytes(included.storageBytes)} of
            storage a month; past them the overage is billed ($0.50 per extra million operations, $0.25 per GB-month),
            and calls keep working.
          </p>
        ) : (
          <p>
            Calls are never refused for usage on the {props.plan} plan; only the rate limit per key applies (about 20
            requests a second, bursts of 60{props.plan === "enterprise" ? ", or your contract's" : ""}).
          </p>
        )}
      </CardContent>
    </Card>
  );
}
