-- Billing with Stripe (CLOUD.md, "Billing"): a workspace's Stripe customer and subscription,
-- the webhook events already applied (each event id once), and the meter-event outbox the
-- overage job sends from (one row per workspace, meter and UTC day; its identifier is the
-- meter event's idempotent identifier).
CREATE TABLE "billing_customers" (
  "workspace_id" TEXT NOT NULL,
  "stripe_customer_id" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "billing_customers_pkey" PRIMARY KEY ("workspace_id"),
  CONSTRAINT "billing_customers_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "billing_customers_stripe_customer_id_key" ON "billing_customers"("stripe_customer_id");

CREATE TABLE "subscriptions" (
  "workspace_id" TEXT NOT NULL,
  "stripe_subscription_id" TEXT NOT NULL,
  "status" TEXT NOT NULL,
  "cancel_at_period_end" BOOLEAN NOT NULL DEFAULT false,
  "current_period_end" TIMESTAMPTZ(3),
  "grace_until" TIMESTAMPTZ(3),
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "subscriptions_pkey" PRIMARY KEY ("workspace_id"),
  CONSTRAINT "subscriptions_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "subscriptions_stripe_subscription_id_key" ON "subscriptions"("stripe_subscription_id");

CREATE TABLE "billing_events" (
  "id" TEXT NOT NULL,
  "type" TEXT NOT NULL,
  "workspace_id" TEXT,
  "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "billing_events_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "meter_outbox" (
  "identifier" TEXT NOT NULL,
  "workspace_id" TEXT NOT NULL,
  "meter" TEXT NOT NULL,
  "day" DATE NOT NULL,
  "value" BIGINT NOT NULL,
  "customer" TEXT NOT NULL,
  "attempts" INTEGER NOT NULL DEFAULT 0,
  "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "last_error" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "sent_at" TIMESTAMPTZ(3),
  CONSTRAINT "meter_outbox_pkey" PRIMARY KEY ("identifier"),
  CONSTRAINT "meter_outbox_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "meter_outbox_workspace_id_meter_day_key" ON "meter_outbox"("workspace_id", "meter", "day");
CREATE INDEX "meter_outbox_sent_at_next_attempt_at_idx" ON "meter_outbox"("sent_at", "next_attempt_at");
