import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { closestName } from '../closest-name.ts';
import { isNotifyError } from '../errors.ts';
import { registerCampaignsCreate } from './commands/campaigns-create.ts';
import { registerCampaignsLifecycle } from './commands/campaigns-lifecycle.ts';
import { registerCampaignsList } from './commands/campaigns-list.ts';
import { registerContactsExport } from './commands/contacts-export.ts';
import { registerContactsImport } from './commands/contacts-import.ts';
import { registerDemo } from './commands/demo.ts';
import { registerMigrate } from './commands/migrate.ts';
import { registerProcessDrips } from './commands/process-drips.ts';
import { registerSendCampaign } from './commands/send-campaign.ts';
import { registerServe } from './commands/serve.ts';
import { registerStats } from './commands/stats.ts';
import { registerWorker } from './commands/worker.ts';

// src/cli/ and dist/cli/ both sit two folders below the package root
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * `notify <command>`: one file per command under cli/commands/, each adds itself to the program with
 * only its name, options and help; its action imports the command's `-run.ts` file, which loads the
 * app, when that command runs. `--version`, `--help` and a mistyped command load none of it.
 */
const program = new Command('notify')
  .description('Email campaigns and drip sequences with tracking, unsubscribe and suppression')
  .version(version, '-V, --version', 'print the version of notify')
  .option('-c, --config <file>', 'config file (default: notify.config.json or notify.config.js in this folder)')
  .option('--env-file <file>', 'settings file of NOTIFY_*=value lines (default: .env in this folder, if there is one)')
  .showHelpAfterError();

for (const register of [registerMigrate, registerContactsImport, registerContactsExport, registerStats, registerServe, registerSendCampaign, registerCampaignsCreate, registerCampaignsList, registerCampaignsLifecycle, registerProcessDrips, registerWorker, registerDemo]) register(program);

// The spec's commands carry a `notify:` namespace that newcomers leave out; commander's own hint
// only reaches names three edits away.
program.on('command:*', ([name]: string[]) => {
  const names = program.commands.map((c) => c.name());
  const suggestion = closestName(name, names, (c) => [c, c.replace(/^notify:/, '')]);
  console.error(`notify: unknown command '${name}'${suggestion ? `; did you mean 'notify ${suggestion}'?` : ''} ('notify --help' lists them all)`);
  process.exitCode = 1;
});

program.parseAsync(process.argv).catch((err) => {
  if (isNotifyError(err)) console.error(`notify: ${err.message} [${err.code}]`);
  else console.error(`notify: ${err instanceof Error ? err.message : String(err)}`, process.env.NOTIFY_DEBUG ? err : '');
  process.exitCode = 1;
});
