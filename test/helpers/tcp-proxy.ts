import net from 'node:net';

/**
 * A TCP proxy the test controls, standing between the service and a shared server (PostgreSQL, Redis):
 * `cut()` drops every connection and refuses new ones, `stall()` keeps every connection open but stops
 * forwarding (a dependency that hangs without closing anything), `restore()` lets traffic through again.
 * The shared servers keep running for everyone else.
 */
export class TcpProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private stalled = false;
  // Chunks that arrived while stalled, in arrival order: delivered on restore(), as a network that comes
  // back delivers what it held, so the protocol stream on each connection stays whole.
  private held: { to: net.Socket; chunk: Buffer }[] = [];
  port = 0;
  /** Bytes the clients (the service) have sent through the proxy, forwarded or held. */
  bytesFromClients = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Starts listening (on a fixed port after the first start, so clients can reconnect). */
  async start(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      this.forward(client, upstream, true);
      this.forward(upstream, client, false);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  private forward(from: net.Socket, to: net.Socket, fromClient: boolean): void {
    from.on('data', (chunk: Buffer) => {
      if (fromClient) this.bytesFromClients += chunk.length;
      if (this.stalled) this.held.push({ to, chunk });
      else to.write(chunk);
    });
  }

  /** Drops every connection and stops accepting: the dependency is "down". */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.stalled = false;
    this.held = [];
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Keeps every connection (and accepts new ones) but forwards nothing: the dependency hangs. */
  stall(): void {
    this.stalled = true;
  }

  /** Forwards again (delivering what a stall held), and accepts connections again after a cut. */
  async restore(): Promise<void> {
    this.stalled = false;
    const held = this.held;
    this.held = [];
    for (const { to, chunk } of held) if (!to.destroyed) to.write(chunk);
    if (!this.server) await this.start();
  }
}
