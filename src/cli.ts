import { ConfigError, loadConfig } from './config.js';
import { CommandFailure, runCommand, usage, UsageError } from './cli/commands.js';
import { AppError } from './http/errors.js';

// Thin entry point of the ops CLI. With --json, stdout carries exactly one JSON value; everything else
// (errors, hints) goes to stderr, so scripts can pipe the output straight into a JSON parser.
async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help' || argv[0] === '-h') {
    console.error(usage());
    return argv.length === 0 ? 2 : 0;
  }
  try {
    const write = (chunk: string) =>
      new Promise<void>((resolve) => {
        if (process.stdout.write(chunk)) resolve();
        else process.stdout.once('drain', () => resolve());
      });
    const { output, asJson } = await runCommand(loadConfig(), argv, write);
    if (output.streamed) console.error(`exported ${output.count ?? 0} events`);
    else await write(asJson ? `${JSON.stringify(output.json)}\n` : `${output.text}\n`);
    return 0;
  } catch (error) {
    if (error instanceof CommandFailure) {
      if (argv.includes('--json')) process.stdout.write(`${JSON.stringify({ ok: false, ...(error.details as object) })}\n`);
      console.error(error.message);
      return 1;
    }
    if (error instanceof UsageError) {
      console.error(`error: ${error.message}\n\n${usage()}`);
      return 2;
    }
    if (error instanceof ConfigError || error instanceof AppError) {
      console.error(`error: ${error.message}`);
      return 1;
    }
    console.error(error);
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
