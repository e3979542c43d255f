-- An audit batch retried after an outage (its first attempt may have committed unseen) must not
-- write its entries twice: each entry's id is unique within its timestamp's partition.
CREATE UNIQUE INDEX "audit_ts_id_key" ON "audit"("ts", "id");
