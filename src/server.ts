import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';

/** A reason not to start that one line explains fully (printed as is, exit code 1, no stack trace). */
class StartupError extends Error {
  override name = 'StartupError';
}

// Thin entry point: configuration, the app, listening, and a graceful SIGTERM/SIGINT shutdown
// (stop accepting, let in-flight requests finish, replies in flight end with the fallback answer, close
// the database), all before SHUTDOWN_TIMEOUT_MS.
async function main(): Promise<void> {
  const config = loadConfig();
  const app = await buildApp(config);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const timer = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    timer.unref();
    // A keep-alive connection whose last response was sent (a drained reply, a finished request) would
    // hold server.close() until it times out: close each one as soon as it is idle.
    const idleConnections = setInterval(() => app.server.closeIdleConnections(), 50);
    idleConnections.unref();
    app.close().then(
      () => {
        app.log.info('shutdown complete');
        process.exit(0);
      },
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    await app.close();
    throw new StartupError(
      `Port ${config.port} is already in use (another copy of the service or another program). Stop it, or start with PORT=${config.port + 1} npm start.`,
    );
  }
  const where = config.database.kind === 'sqlite' ? config.database.path : 'PostgreSQL';
  app.log.info(`serving the API at ${config.publicUrl}/api/v1 (reference: ${config.publicUrl}/docs, database: ${where})`);
  if (!(await app.services.users.anyExist()) && !(await app.services.apiKeys.anyExist())) {
    // A first run (no account, no key): say where to start.
    app.log.info(
      `first run? Open ${config.publicUrl} in a browser and create your account: the dashboard leads you to a working agent and an API key. ` +
        '(Without a browser: npm run --silent cli -- workspace create --name "My company" --json, then key create --workspace <ws_id> --scopes all --json.)',
    );
  }
}

main().catch((error: unknown) => {
  if (error instanceof StartupError) {
    console.error(error.message);
    process.exit(1);
  }
  if (error instanceof ConfigError) {
    console.error(`configuration error: ${error.message}`);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
