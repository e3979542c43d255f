// The images' HEALTHCHECK: `node infra/docker/healthcheck.mjs <path> <port variable> <default port>`.
// Asks the container's own hostname (its network address), not 127.0.0.1, so a server that
// listens on loopback only — unreachable from other containers — counts as unhealthy.
import { hostname } from "node:os";

const [path, portVariable, defaultPort] = process.argv.slice(2);
const port = process.env[portVariable] ?? defaultPort;
try {
  const res = await fetch(`http://${hostname()}:${port}${path}`, { signal: AbortSignal.timeout(4000) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
