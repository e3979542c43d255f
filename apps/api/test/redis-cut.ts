// A TCP door to the machine's Redis that a test can cut and reopen (the limiter's fallback
// tests): while cut, connections are dropped and refused, as when Redis is unreachable; Redis's
// own data stays, as after a network partition.
import { connect, createServer, type Server, type Socket } from "node:net";

export class RedisCut {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  /** Opens the door on a free port in front of `target` (the machine's Redis by default). */
  static async open(target = { host: "127.0.0.1", port: 6379 }): Promise<RedisCut> {
    const probe = createServer();
    const port = await new Promise<number>((resolve) =>
      probe.listen(0, "127.0.0.1", () => resolve((probe.address() as { port: number }).port)),
    );
    await new Promise((resolve) => probe.close(resolve));
    const door = new RedisCut(port, target);
    await door.reopen();
    return door;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Drops every connection and refuses new ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server !== null) await new Promise((resolve) => server.close(resolve));
  }

  /** Accepts connections again, on the same port. */
  async reopen(): Promise<void> {
    this.server = createServer((client) => this.pipe(client));
    await new Promise<void>((resolve) => this.server?.listen(this.port, "127.0.0.1", resolve));
  }

  private pipe(client: Socket): void {
    const upstream = connect(this.target.port, this.target.host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
