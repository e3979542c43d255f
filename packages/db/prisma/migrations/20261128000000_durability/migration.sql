-- Durable acknowledgements: a primitive's own durability (`fast` | `durable`); null follows the
-- engine's (the cloud's default is `durable`).
ALTER TABLE "primitives" ADD COLUMN "durability" TEXT;
ALTER TABLE "primitives" ADD CONSTRAINT "primitives_durability_check" CHECK ("durability" IN ('fast', 'durable'));
