// What `npm run test:mutation -- <target>` mutates, and the test files that judge each mutant.
// Stryker's command runner runs the whole command once per mutant, so each target names only the tests
// that exercise its code, the most specific first (the run stops at the first failing file). A mutant
// these tests miss is reported as surviving; a test file that should have caught it belongs in the list.
import { testFiles } from './test-files.mjs';

const ROUTE = 'test/webhooks/route.test.ts';
const GAPS = 'test/webhooks/mutation-gaps-providers.test.ts';
const SNS_GAPS = 'test/webhooks/mutation-gaps-sns.test.ts';
const SHARED_GAPS = 'test/webhooks/mutation-gaps-shared.test.ts';
const EVENTS_GAPS = 'test/webhooks/mutation-gaps-events.test.ts';
const WEBHOOK_TESTS = [SHARED_GAPS, EVENTS_GAPS, ROUTE, 'test/webhooks/ses-sns.test.ts', 'test/webhooks/providers.test.ts', 'test/webhooks/mounting.test.ts', GAPS, SNS_GAPS];
const UNSUBSCRIBE_TESTS = ['test/http/unsubscribe.test.ts', 'test/core/contacts.test.ts'];

export const TARGETS = {
  // src/webhooks/ in three parts that together cover every file of the folder.
  'webhooks-sns': { mutate: ['src/webhooks/drivers/ses-sns.ts', 'src/webhooks/sns/**/*.ts'], tests: ['test/webhooks/ses-sns.test.ts', SNS_GAPS, ROUTE] },
  'webhooks-providers': { mutate: ['src/webhooks/drivers/{provider-driver,postmark,sendgrid,mailgun}.ts'], tests: ['test/webhooks/providers.test.ts', GAPS, ROUTE] },
  'webhooks-shared': { mutate: ['src/webhooks/*.ts'], tests: WEBHOOK_TESTS },
  // The parts of src/core/ where a silent breakage costs the most, each with the tests that reach it.
  suppression: { mutate: ['src/core/suppression.ts'], tests: [...UNSUBSCRIBE_TESTS, ROUTE, 'test/send/send.test.ts', 'test/send/campaign.test.ts'] },
  // List-scoped and send-token unsubscribes: the gaps file reads what the scope and short-link tests leave unread.
  unsubscribe: { mutate: ['src/core/unsubscribe.ts'], tests: ['test/audience/mutation-gaps-unsubscribe.test.ts', ...UNSUBSCRIBE_TESTS, 'test/audience/unsubscribe-scope.test.ts', 'test/http/unsubscribe-short.test.ts'] },
  'webhook-events': { mutate: ['src/core/webhook-events.ts'], tests: WEBHOOK_TESTS },
  // The drip worker: claims, the step's send row, the enrollment's next state. The CLI test is left out
  // (it builds and spawns the package; the same run is reached in-process by the tests listed).
  'drip-worker': {
    mutate: ['src/core/drip-run.ts', 'src/core/drip-decisions.ts'],
    tests: [
      'test/drips/transitions.test.ts',
      'test/drips/deferral.test.ts',
      'test/drips/claim-taken-back.test.ts',
      'test/drips/step-in-flight.test.ts',
      'test/drips/unsubscribed-during-delivery.test.ts',
      'test/delivery/recording.test.ts',
      'test/delivery/failures.test.ts',
      'test/delivery/throttle.test.ts',
    ],
  },
  // Sequences and their steps, enrolment and a sequence's enrollments page.
  'drip-sequences': {
    mutate: ['src/core/drips.ts', 'src/core/enrollment-list.ts'],
    tests: ['test/drips/transitions.test.ts', 'test/api/bad-inputs.test.ts', 'test/api/contract.test.ts', 'test/triggers/list-joined.test.ts'],
  },
  // All of src/core/ against the whole unit suite: ~2,600 mutants x the suite's minutes; for a big machine.
  core: { mutate: ['src/core/**/*.ts'], tests: ['test'] },
};

/** Names that run several targets in turn. */
export const GROUPS = {
  webhooks: ['webhooks-sns', 'webhooks-providers', 'webhooks-shared'],
  drips: ['drip-worker', 'drip-sequences'],
  'core-at-risk': ['suppression', 'unsubscribe', 'webhook-events', 'drip-worker', 'drip-sequences'],
};

// Never part of a mutation run: they need a browser or build the package, and check nothing a mutant changes.
export const SLOW_OR_UNRELATED = ['test/admin/browser.test.ts', 'test/capture/browser.test.ts', 'test/package/build.test.ts'];

/** The target's test files that exist, in the order listed. */
export function targetTests(name) {
  return testFiles(TARGETS[name].tests).filter((f) => !SLOW_OR_UNRELATED.includes(f));
}
