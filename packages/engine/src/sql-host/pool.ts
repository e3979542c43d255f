import { SqlHostProcess } from "./host-process.js";
import type { DbLocation, HostRequest } from "./protocol.js";
import { STATEMENT_TIMEOUT_MS } from "./protocol.js";

/**
 * SQL host processes by default. One host lets a single caller's slow statements (each may run
 * 5 s) queue every other db behind them; with N hosts and one host per db at a time, N − 1 dbs
 * can run slow statements at once while the rest are still answered at once. Three keeps a
 * write answered while two neighbours misbehave, and costs little: a host is a Node process
 * (~40 MB) started only when the ones before it are busy, so a quiet engine runs one.
 */
export const DEFAULT_SQL_HOSTS = 3;

export interface SqlHostOptions {
  /** Host processes (default DEFAULT_SQL_HOSTS, at least 1). */
  size?: number;
  /** Statement time limit per request (default 5 s). */
  timeoutMs?: number;
  /**
   * Most hosts one tenant's dbs may keep busy at once (default: all). The local engine has
   * one tenant; the cloud passes each request's workspace as its tenant and sets this below
   * `size`, so one workspace's slow statements cannot occupy every host while others wait.
   */
  maxHostsPerTenant?: number;
}

/** One db's place in the pool. */
interface Lane {
  /** The host its requests go to while any is unanswered. */
  host: number;
  inFlight: number;
  tenant: string;
  /** Hosts that may hold connections to its files (see `route`). */
  opened: Set<number>;
}

/**
 * The SQL hosts of an engine, and which db runs where. Rules:
 * - a db's requests are answered in the order they were made (the engine relies on it): while
 *   one is unanswered, the db's next requests go to the same host, which runs them in order;
 * - so a db occupies at most one host at a time, and its slow statements delay only the dbs
 *   that share that host at that moment;
 * - a db with nothing in flight goes to the least busy host (fewest unanswered requests; the
 *   first of equals, so a quiet engine uses one process), within its tenant's share.
 * A db's files are open in at most one host: when it moves, the host it leaves gets a `close`
 * for it, queued ahead of anything the db may send there later. So a connection never outlives
 * a promote, restore or branch delete made through another host, and closing a db (delete,
 * eviction, shutdown) waits for every host that may have it open.
 */
export class SqlHost {
  private readonly hosts: SqlHostProcess[];
  private readonly lanes = new Map<string, Lane>();
  /** Per tenant, unanswered requests on each host. */
  private readonly tenantLoad = new Map<string, number[]>();
  private readonly maxHostsPerTenant: number;

  constructor(options: SqlHostOptions = {}) {
    const size = Math.max(1, Math.floor(options.size ?? DEFAULT_SQL_HOSTS));
    this.hosts = Array.from({ length: size }, () => new SqlHostProcess(options.timeoutMs ?? STATEMENT_TIMEOUT_MS));
    this.maxHostsPerTenant = Math.max(1, Math.min(size, options.maxHostsPerTenant ?? size));
  }

  get size(): number {
    return this.hosts.length;
  }

  /** Unanswered requests on all hosts. */
  get load(): number {
    return this.hosts.reduce((sum, h) => sum + h.load, 0);
  }

  /**
   * Runs `req` for the db at `req.at`; `tenant` is the workspace in the cloud (see options);
   * `extraMs` lengthens its time limit (SqlHostProcess.request).
   */
  request<T>(req: HostRequest, tenant = "", extraMs = 0): Promise<T> {
    if (req.kind === "close") return this.closeEverywhere(req.at) as Promise<T>;
    const lane = this.route(req.at, tenant);
    const host = lane.host;
    const tenantLoad = this.tenantHosts(lane.tenant);
    lane.inFlight++;
    tenantLoad[host] = (tenantLoad[host] as number) + 1;
    const settle = () => {
      lane.inFlight--;
      tenantLoad[host] = (tenantLoad[host] as number) - 1;
    };
    const answer = (this.hosts[host] as SqlHostProcess).request<T>(req, extraMs);
    answer.then(settle, settle);
    return answer;
  }

  /** Which host the db's request goes to: its current one while busy, else the least busy. */
  private route(at: DbLocation, tenant: string): Lane {
    let lane = this.lanes.get(at.file);
    if (lane === undefined) {
      lane = { host: -1, inFlight: 0, tenant, opened: new Set() };
      this.lanes.set(at.file, lane);
    }
    if (lane.inFlight === 0) {
      lane.tenant = tenant;
      const host = this.leastBusy(tenant);
      if (host !== lane.host) {
        lane.host = host;
        for (const other of lane.opened) if (other !== host) void this.closeOn(other, at, lane);
      }
    }
    lane.opened.add(lane.host);
    return lane;
  }

  private leastBusy(tenant: string): number {
    const mine = this.tenantHosts(tenant);
    // A tenant that already keeps its share of hosts busy waits on one of those.
    const occupied = mine.filter((n) => n > 0).length;
    const allowed = (i: number) => occupied < this.maxHostsPerTenant || (mine[i] as number) > 0;
    let best = -1;
    for (let i = 0; i < this.hosts.length; i++) {
      if (!allowed(i)) continue;
      if (best === -1 || (this.hosts[i] as SqlHostProcess).load < (this.hosts[best] as SqlHostProcess).load) best = i;
    }
    return best;
  }

  private tenantHosts(tenant: string): number[] {
    let load = this.tenantLoad.get(tenant);
    if (load === undefined) {
      load = this.hosts.map(() => 0);
      this.tenantLoad.set(tenant, load);
    }
    return load;
  }

  /**
   * Closes the db's connections on host `i`. With `lane` (the db moved away), that host no
   * longer counts as holding them once done, unless the db came back to it meanwhile.
   */
  private closeOn(i: number, at: DbLocation, lane?: Lane): Promise<unknown> {
    const done = () => {
      if (lane !== undefined && lane.host !== i) lane.opened.delete(i);
    };
    const host = this.hosts[i] as SqlHostProcess;
    // A host that is not running holds no connection (a restart opens none).
    if (!host.running) {
      done();
      return Promise.resolve();
    }
    return host.request({ kind: "close", at }).then(done, done);
  }

  /** A db's `close`: on every host that may hold its files, after its unanswered requests. */
  private async closeEverywhere(at: DbLocation): Promise<{ closed: true }> {
    const lane = this.lanes.get(at.file);
    if (lane === undefined) return { closed: true }; // no host ever opened it
    // Requests routed from now on (the db reopened at once) reopen their host's connections
    // after this close, which that host runs first.
    const hosts = [...lane.opened];
    lane.opened.clear();
    await Promise.all(hosts.map((i) => this.closeOn(i, at)));
    if (lane.inFlight === 0 && lane.opened.size === 0) this.lanes.delete(at.file);
    return { closed: true };
  }

  /** Stops every host process (unanswered requests fail). */
  async close(): Promise<void> {
    await Promise.all(this.hosts.map((h) => h.close()));
  }
}
