// What `npm run test:mutation -- <target>` mutates, and the test files that may judge each mutant.
// The tap runner (stryker.config.mjs) runs every listed file once, records which mutants each file
// reaches, then runs each mutant against only the files that reach it. A wide list costs only that
// first run; a file left out can leave mutants it would have killed reported as surviving.
import { testFiles } from './test-files.mjs';

const ROUTE = 'test/webhooks/route.test.ts';
const GAPS = 'test/webhooks/mutation-gaps-providers.test.ts';
const SNS_GAPS = 'test/webhooks/mutation-gaps-sns.test.ts';
const SHARED_GAPS = 'test/webhooks/mutation-gaps-shared.test.ts';
const EVENTS_GAPS = 'test/webhooks/mutation-gaps-events.test.ts';
// the driver contract suite and the providers' documented example payloads, through the drivers and the route
const CONTRACT = 'test/webhooks/contract.test.ts';
const EXAMPLES = 'test/webhooks/provider-examples.test.ts';
const WEBHOOK_TESTS = [SHARED_GAPS, EVENTS_GAPS, ROUTE, 'test/webhooks/ses-sns.test.ts', 'test/webhooks/providers.test.ts', 'test/webhooks/mounting.test.ts', GAPS, SNS_GAPS, CONTRACT, EXAMPLES];
const DRIP_WORKER_TESTS = [
  'test/drips/mutation-gaps-resume.test.ts',
  'test/drips/mutation-gaps-delivery.test.ts',
  'test/drips/run-aborted.test.ts',
  'test/drips/transitions.test.ts',
  'test/drips/deferral.test.ts',
  'test/drips/claim-taken-back.test.ts',
  'test/drips/step-in-flight.test.ts',
  'test/drips/unsubscribed-during-delivery.test.ts',
  // chunks of one run, a contact suppressed inside a chunk or while its step waits, a step's group commit
  'test/drips/chunk-loop.test.ts',
  'test/drips/suppressed-in-chunk.test.ts',
  'test/drips/suppressed-while-waiting.test.ts',
  'test/drips/step-group.test.ts',
  // rows cancelled behind an enrollment cancelled outside the run; reclaimed steps of one chunk, each by its own row
  'test/drips/cancelled-between-reads.test.ts',
  'test/drips/resumed-chunk.test.ts',
  // a group with a step failed for good: notify_enrollment_failed for that enrollment alone
  'test/drips/failed-beside-sent.test.ts',
  'test/delivery/recording.test.ts',
  'test/delivery/failures.test.ts',
  'test/delivery/throttle.test.ts',
  // the notify:enrollment.failed payload, in-process and on the wire
  'test/triggers/suppression-events.test.ts',
];
const CAMPAIGN_TESTS = ['test/campaigns', 'test/send', 'test/delivery', 'test/admin', 'test/api', 'test/stats', 'test/pacing', 'test/render'];
const DELIVERY_TESTS = ['test/send', 'test/delivery', 'test/drips', 'test/campaigns', 'test/mail', 'test/pacing', 'test/render', 'test/bounces', 'test/http', 'test/core'];
const AUDIENCE_TESTS = ['test/core', 'test/audience', 'test/import', 'test/capture', 'test/api', 'test/triggers', 'test/admin', 'test/http', 'test/rate-limit'];
const UNSUBSCRIBE_TESTS = ['test/http/unsubscribe.test.ts', 'test/core/contacts.test.ts'];

export const TARGETS = {
  // src/webhooks/ in three parts that together cover every file of the folder.
  'webhooks-sns': { mutate: ['src/webhooks/drivers/ses-sns.ts', 'src/webhooks/sns/**/*.ts'], tests: ['test/webhooks/ses-sns.test.ts', SNS_GAPS, 'test/webhooks/ses-sns-key-type.test.ts', ROUTE, CONTRACT, EXAMPLES] },
  'webhooks-providers': { mutate: ['src/webhooks/drivers/{provider-driver,postmark,sendgrid,mailgun}.ts'], tests: ['test/webhooks/providers.test.ts', GAPS, ROUTE, CONTRACT, EXAMPLES] },
  'webhooks-shared': { mutate: ['src/webhooks/*.ts'], tests: WEBHOOK_TESTS },
  // The parts of src/core/ where a silent breakage costs the most, each with the tests that reach it.
  // deferral.test.ts: a contact suppressed while a drip step waits deferred has that step's row cancelled;
  // suppression-events.test.ts: the events' payloads on the wire.
  // delivery/deferral.test.ts: a campaign send deferred when its contact unsubscribes is suppressed and counted so;
  // status-by-upsert.test.ts: a suppressed status given to contacts.upsert or an import goes through the same flow;
  // status-lift-by-upsert.test.ts: any other explicit status is written as given (it lifts a suppression);
  // created-suppressed.test.ts: a contact created with a suppressed status, its event marked `created`;
  // auto-pause.test.ts: late bounces (not unsubscribes) of sends before a resume go to the auto-pause base;
  // transitions.test.ts: suppressContact, which only tests call.
  suppression: {
    mutate: ['src/core/suppression.ts'],
    tests: [...UNSUBSCRIBE_TESTS, ROUTE, 'test/send/send.test.ts', 'test/send/campaign.test.ts', 'test/drips/deferral.test.ts', 'test/delivery/deferral.test.ts', 'test/triggers/suppression-events.test.ts', 'test/audience/status-by-upsert.test.ts', 'test/audience/status-lift-by-upsert.test.ts', 'test/audience/created-suppressed.test.ts', 'test/campaigns/auto-pause.test.ts', 'test/drips/transitions.test.ts'],
  },
  // List-scoped and send-token unsubscribes: the gaps file reads what the scope and short-link tests leave unread.
  unsubscribe: { mutate: ['src/core/unsubscribe.ts'], tests: ['test/audience/mutation-gaps-unsubscribe.test.ts', ...UNSUBSCRIBE_TESTS, 'test/audience/unsubscribe-scope.test.ts', 'test/http/unsubscribe-short.test.ts'] },
  'webhook-events': { mutate: ['src/core/webhook-events.ts'], tests: WEBHOOK_TESTS },
  // The drip worker: claims, the step's send row, the enrollment's next state, in two targets (drip-run.ts,
  // then drip-decisions.ts) so that each keeps its verdicts when the other is interrupted. The CLI test is
  // left out (it builds and spawns the package; the same run is reached in-process by the tests listed).
  'drip-run': { mutate: ['src/core/drip-run.ts'], tests: DRIP_WORKER_TESTS },
  'drip-decisions': { mutate: ['src/core/drip-decisions.ts'], tests: DRIP_WORKER_TESTS },
  // Sequences and their steps, enrolment and a sequence's enrollments page; the gaps file calls the library where
  // the HTTP tests stop at the route's own checks.
  'drip-sequences': {
    mutate: ['src/core/drips.ts', 'src/core/enrollment-list.ts'],
    tests: ['test/drips/mutation-gaps-sequences.test.ts', 'test/drips/transitions.test.ts', 'test/api/bad-inputs.test.ts', 'test/api/contract.test.ts', 'test/triggers/list-joined.test.ts'],
  },
  // The rest of src/core/, by what the code is about. Together with the five targets above, every file
  // of src/core/ is in exactly one target of the group `core` (test/mutation-targets.test.ts checks it).
  // Each holds 390 to 950 mutants, so that a long run keeps what it finished when it is interrupted.
  'core-campaigns': { mutate: ['src/core/{campaigns,campaign-input,campaign-lifecycle,campaign-start,campaign-control,campaign-status,auto-pause}.ts'], tests: CAMPAIGN_TESTS },
  // drips/deferral.test.ts: a drip step's retries and failures, the half of deferral.ts no campaign reaches
  'core-campaign-run': { mutate: ['src/core/{campaign-run,campaign-claim,campaign-ledger,campaign-preview,campaign-test-send,deferral}.ts'], tests: [...CAMPAIGN_TESTS, 'test/drips/deferral.test.ts'] },
  'core-delivery': { mutate: ['src/core/{send,send-turns,delivery,dispatch,group-writer,group-wake,outbound-delivery,pacer,clock,next-wake}.ts'], tests: DELIVERY_TESTS },
  'core-message': { mutate: ['src/core/{mailer,headers,header-limits,list-headers,failure,message-input,email}.ts'], tests: DELIVERY_TESTS },
  'core-audience': {
    mutate: ['src/core/{contacts,contact-input,contact-membership,contact-query,lists,segments,segment-references,person-data,preferences,categories,link-lists}.ts'],
    tests: AUDIENCE_TESTS,
  },
  'core-import-capture': { mutate: ['src/core/{import,import-columns,csv,export,capture,capture-fields,optin,optin-mail}.ts'], tests: AUDIENCE_TESTS },
  'core-tracking': {
    mutate: ['src/core/{tokens,sha256,tracking-recorder,request-reasons,tracking-stats,click-resolver,click-window,link-refs,engagement,events,stats,timeline}.ts'],
    tests: ['test/http', 'test/stats', 'test/render', 'test/core', 'test/admin', 'test/send', 'test/triggers', 'test/bounces'],
  },
  'core-storage': { mutate: ['src/core/storage/*.ts', 'src/core/types.ts'], tests: ['test/store', 'test/core', 'test/http', 'test/send', 'test/drips'] },
};

/** Names that run several targets in turn. */
export const GROUPS = {
  webhooks: ['webhooks-sns', 'webhooks-providers', 'webhooks-shared'],
  'drip-worker': ['drip-run', 'drip-decisions'],
  drips: ['drip-run', 'drip-decisions', 'drip-sequences'],
  'core-at-risk': ['suppression', 'unsubscribe', 'webhook-events', 'drip-run', 'drip-decisions', 'drip-sequences'],
  // All of src/core/, one target at a time: each finished target keeps its verdicts (incremental), so an
  // interrupted run resumes at the first target that had not finished.
  core: ['drip-run', 'drip-decisions', 'suppression', 'unsubscribe', 'webhook-events', 'drip-sequences', 'core-campaigns', 'core-campaign-run', 'core-delivery', 'core-message', 'core-audience', 'core-import-capture', 'core-tracking', 'core-storage'],
};

// Never part of a mutation run: they need a browser, build the package or spawn the CLI (the tap runner
// cannot see which mutants a child process reaches), or time the machine.
const SLOW_OR_UNRELATED = /browser\.test\.ts$|^test\/(e2e|cli|package|bench)\/|^test\/test-runner\.test\.ts$|^test\/stats\/cli\.test\.ts$|^test\/http\/load\.test\.ts$|^test\/store\/migrate-concurrently\.test\.ts$/;

/** The target's test files that exist, in the order listed. */
export function targetTests(name) {
  return testFiles(TARGETS[name].tests).filter((f) => !SLOW_OR_UNRELATED.test(f));
}
