// node:test reporter for mutation runs (scripts/mutation-command.mjs): a dot per passing test, and at the
// first failing test its name and error, then exit 1 at once. The rest of the target's tests could not
// change the verdict (the mutant is killed), so a killed mutant costs only the tests up to the first failure.
export default async function* bailReporter(source) {
  for await (const event of source) {
    if (event.type === 'test:pass') yield '.';
    if (event.type === 'test:fail' && !event.data.todo && !event.data.skip) {
      const error = event.data.details?.error;
      process.stdout.write(`\nfailed: ${event.data.name} (${event.data.file ?? ''})\n${error?.cause?.message ?? error?.message ?? ''}\n`);
      process.exit(1);
    }
  }
}
