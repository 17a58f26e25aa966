import { Command } from 'commander';
import { isNotifyError } from '../errors.ts';
import { registerCampaignsCreate } from './commands/campaigns-create.ts';
import { registerDemo } from './commands/demo.ts';
import { registerContactsImport } from './commands/contacts-import.ts';
import { registerMigrate } from './commands/migrate.ts';
import { registerSendCampaign } from './commands/send-campaign.ts';
import { registerStats } from './commands/stats.ts';
import { registerServe } from './commands/serve.ts';
import { registerProcessDrips } from './commands/process-drips.ts';
import { registerWorker } from './commands/worker.ts';

/** `notify <command>`: one file per command under cli/commands/, each adds itself to the program. */
const program = new Command('notify')
  .description('Email campaigns and drip sequences with tracking, unsubscribe and suppression')
  .option('-c, --config <file>', 'config file (default: notify.config.json or notify.config.js in this folder)')
  .showHelpAfterError();

for (const register of [registerMigrate, registerContactsImport, registerStats, registerServe, registerSendCampaign, registerCampaignsCreate, registerProcessDrips, registerWorker, registerDemo]) register(program);

program.parseAsync(process.argv).catch((err) => {
  if (isNotifyError(err)) console.error(`notify: ${err.message} [${err.code}]`);
  else console.error(`notify: ${err instanceof Error ? err.message : String(err)}`, process.env.NOTIFY_DEBUG ? err : '');
  process.exitCode = 1;
});
