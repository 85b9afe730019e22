import { Option, type Command } from 'commander';
import { brokerOption, namespaceOption } from '../broker-flags.js';
import { createStderrLogger, envLogLevel } from '../../logger.js';
import { isLoopback } from '../../dashboard/guard.js';
import { DASHBOARD_DEFAULTS } from '../../dashboard/options.js';
import { withClient } from '../connect.js';
import * as parse from '../parsers.js';

interface DashboardFlags {
  broker?: string;
  namespace?: string;
  port: number;
  host: string;
  authToken?: string;
  readOnly?: boolean;
  interval: number;
}

export function registerDashboard(program: Command): void {
  program
    .command('dashboard')
    .description('serve a live web page of the nodes, their children, the queues and the jobs, with actions')
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('--port <n>', 'port to listen on (0: any free port)', parse.port, DASHBOARD_DEFAULTS.port)
    .option('--host <address>', 'address to bind (0.0.0.0: every interface)', DASHBOARD_DEFAULTS.host)
    .addOption(
      new Option(
        '--auth-token <token>',
        'every request must carry this token (open /?token=<token>, or send Authorization: Bearer <token>)',
      )
        .env('PREFORK_DASHBOARD_TOKEN')
        .argParser(parse.authToken),
    )
    .option('--read-only', 'show only: refuse every action (retry, delete, revoke, pause, resume, grow, shrink, ...)')
    .addOption(
      new Option('--interval <duration>', 'how often the counts and the nodes are read (e.g. 2s)')
        .argParser(parse.timerDuration)
        .default(DASHBOARD_DEFAULTS.sampleInterval, `${DASHBOARD_DEFAULTS.sampleInterval / 1000}s`),
    )
    .action((flags: DashboardFlags) => serve(flags));
}

async function serve(flags: DashboardFlags): Promise<void> {
  const log = createStderrLogger(envLogLevel('warn'));
  // Loaded here: the other commands never need the dashboard.
  const { startDashboard } = await import('../../dashboard/dashboard.js');
  await withClient(flags, async (client, broker) => {
    const dashboard = await startDashboard(broker, client, {
      port: flags.port,
      host: flags.host,
      authToken: flags.authToken,
      readOnly: flags.readOnly === true,
      sampleInterval: flags.interval,
      logger: log,
    });
    if (!isLoopback(flags.host) && flags.authToken === undefined)
      log.warn(
        { host: flags.host },
        'the dashboard listens beyond this machine without --auth-token: anyone who reaches the port can see and act',
      );
    const mode = [flags.readOnly === true ? 'read-only' : '', flags.authToken === undefined ? '' : 'token required']
      .filter(Boolean)
      .join(', ');
    process.stdout.write(
      `dashboard on ${dashboard.url}/${mode === '' ? '' : ` (${mode})`} (broker ${broker.displayUrl})\n`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    await dashboard.close();
  });
}
