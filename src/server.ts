import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';

// Thin entry point: configuration, the app, listening, and a graceful SIGTERM/SIGINT shutdown
// (stop accepting, let in-flight requests finish, close the database).
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
  await app.listen({ port: config.port, host: config.host });
  const where = config.database.kind === 'sqlite' ? config.database.path : 'PostgreSQL';
  app.log.info(`serving the API at ${config.publicUrl}/api/v1 (reference: ${config.publicUrl}/docs, database: ${where})`);
  if (!(await app.services.apiKeys.anyExist())) {
    // A first run: nobody can call the API yet, so say how to get a key.
    app.log.info(
      'no API keys yet. Create a workspace and a key in another terminal (same folder and DATABASE_URL): ' +
        'npm run --silent cli -- workspace create --name "My company" --json   then   ' +
        'npm run --silent cli -- key create --workspace <ws_id from above> --scopes all --json   ' +
        '(optional sample data: npm run --silent cli -- demo seed --workspace <ws_id>)',
    );
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`configuration error: ${error.message}`);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
